#include "exporter/qos/drift_checks.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>

#include <string>
#include <string_view>

namespace roceqos {
namespace {

// Verdict builders: absent/failed come from the source, drift/in-sync from the comparison.
FieldVerdict Verdict(QosField field, std::string expected) {
  FieldVerdict v;
  v.field = field;
  v.expected = std::move(expected);
  return v;
}

template <typename T>
bool FromSource(const Observed<T>& source, std::string_view what, FieldVerdict* v) {
  if (source.absent()) {
    v->status = FieldStatus::kAbsent;
    v->actual = fmt::format("absent ({})", what);
    return false;
  }
  if (source.failed()) {
    v->status = FieldStatus::kFailed;
    v->actual = fmt::format("unreadable: {}", source.error);
    return false;
  }
  return true;
}

void Compare(bool equal, std::string actual, std::string impact, FieldVerdict* v) {
  v->actual = std::move(actual);
  if (!equal) {
    v->status = FieldStatus::kDrift;
    v->impact = std::move(impact);
  }
}

std::string PfcImpact(uint8_t expected, uint8_t actual) {
  std::vector<std::string> parts;
  for (int p = 0; p < kNumPriorities; ++p) {
    bool want = (expected >> p) & 1, have = (actual >> p) & 1;
    if (want && !have)
      parts.push_back(fmt::format(
          "PFC off on priority {}: RoCE traffic there becomes lossy; expect packet drops "
          "(rx_prio{}_discards), retransmissions and out_of_sequence / packet_seq_err",
          p, p));
    if (!want && have)
      parts.push_back(fmt::format(
          "PFC on priority {}, which the policy keeps lossy: its pause frames can spread "
          "congestion to other flows (head-of-line blocking, PFC storms)",
          p));
  }
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out;
}

// Observed per-priority DCQCN enables: absent when the sysfs tree does not exist, failed when any
// priority could not be read.
Observed<uint8_t> DcqcnMask(const std::array<Observed<bool>, kNumPriorities>& enabled) {
  uint8_t mask = 0;
  int absent = 0;
  for (int p = 0; p < kNumPriorities; ++p) {
    if (enabled[p].failed()) return Observed<uint8_t>::Failed(enabled[p].error);
    if (enabled[p].absent()) {
      ++absent;
      continue;
    }
    if (enabled[p].value) mask = static_cast<uint8_t>(mask | (1u << p));
  }
  if (absent == 8) return Observed<uint8_t>::Absent();
  if (absent != 0) return Observed<uint8_t>::Failed("only some priorities have an enable file");
  return Observed<uint8_t>::Ok(mask);
}

constexpr std::string_view kNoDcb = "no DCB on this device (EOPNOTSUPP)";

void MarkAbsent(std::string actual, FieldVerdict* v) {
  v->status = FieldStatus::kAbsent;
  v->actual = std::move(actual);
}

std::string DscpMapText(const std::map<uint8_t, uint8_t>& dscp_prio) {
  std::string text = "{";
  for (const auto& [dscp, prio] : dscp_prio)
    text += fmt::format("{}{}: {}", text.size() > 1 ? ", " : "", dscp, prio);
  return text + "}";
}

// The sizes are shown only when the policy checks them.
std::string BufferText(const std::array<uint8_t, kNumPriorities>& prio_buffer,
                       const std::array<uint32_t, 8>* size) {
  std::string text = "prio_buffer " + ArrayText(prio_buffer);
  if (size) text += " size " + ArrayText(*size);
  return text;
}

// No global MOFED traffic_class and no rdma_cm default: nothing sets the ToS of a QP that does
// not set its own (collectors/host.h RoceTosState::Effective reads it as 0).
bool TosUnset(const RoceTosState& tos) {
  return tos.mofed_tclass.ok() && !tos.mofed_tclass.value && !tos.configfs_tos.ok() &&
         !tos.configfs_tos.failed();
}

std::string RoceTosImpact(uint8_t expected, bool unset) {
  if (unset)
    return fmt::format(
        "no global traffic_class is set: QPs that set no ToS of their own go out with DSCP 0, "
        "so no PFC and no DCQCN (QPs that set one, e.g. NCCL_IB_TC={}, are not affected); where "
        "every application sets its ToS per connection, stop checking it with roce_tos: null "
        "under the policy's defaults",
        expected);
  return fmt::format(
      "the default ToS differs: QPs that set no ToS of their own go out with a DSCP other than "
      "the lossless class ({}) and/or without ECT, so no PFC and no DCQCN",
      expected >> 2);
}

}  // namespace

namespace drift_check {

// One function per policy field (the field table, qos_fields.cc, says which): the verdict from the
// observation's source, then the comparison.

std::string EtsText(const std::array<uint8_t, kNumTcs>& tsa,
                    const std::array<uint8_t, kNumTcs>& bw) {
  return fmt::format("tsa {} bandwidth {}", TsaListText(tsa), ArrayText(bw));
}

// DCQCN must be enabled on the listed priorities; others are not checked (MOFED enables every
// priority by default, and an enable where no RoCE runs is harmless).
FieldVerdict Dcqcn(QosField field, uint8_t expected,
                   const std::array<Observed<bool>, kNumPriorities>& en) {
  bool np = field == QosField::kDcqcnNp;
  FieldVerdict v = Verdict(field, "enabled on " + PriorityListText(expected));
  Observed<uint8_t> mask = DcqcnMask(en);
  if (!FromSource(
          mask, np ? "no ecn/roce_np sysfs (MOFED only)" : "no ecn/roce_rp sysfs (MOFED only)", &v))
    return v;
  const uint8_t missing = static_cast<uint8_t>(expected & ~mask.value);
  Compare(missing == 0, "enabled on " + PriorityListText(mask.value),
          fmt::format(
              "{} off on {}: {}", np ? "the notification point" : "the reaction point",
              PriorityListText(missing),
              np ? "no CNPs are sent for ECN-marked RoCE packets there: senders never slow down, "
                   "queues build until PFC pauses (more pause frames, possible storms)"
                 : "CNPs are ignored there: this host's QPs do not reduce their rate under "
                   "congestion (DCQCN off)"),
          &v);
  return v;
}

FieldVerdict Trust(TrustMode expected, const Observed<QosState>& dcb) {
  FieldVerdict v = Verdict(QosField::kTrust, std::string(TrustModeName(expected)));
  if (!FromSource(dcb, kNoDcb, &v)) return v;
  TrustMode actual = dcb.value.Trust();
  Compare(actual == expected, std::string(TrustModeName(actual)),
          expected == TrustMode::kDscp
              ? "the NIC classifies by VLAN PCP instead of DSCP: untagged RoCEv2 traffic "
                "lands on priority 0, without PFC and ECN; expect drops and retransmissions"
              : "the NIC classifies by DSCP while the fabric expects PCP: traffic may land on "
                "unexpected priorities",
          &v);
  return v;
}

FieldVerdict Pfc(uint8_t expected, const Observed<QosState>& dcb) {
  FieldVerdict v = Verdict(QosField::kPfc, PriorityListText(expected));
  if (!FromSource(dcb, kNoDcb, &v)) return v;
  if (!dcb.value.pfc) {
    MarkAbsent("absent (the driver returned no ieee_pfc)", &v);
    return v;
  }
  uint8_t actual = dcb.value.pfc->enabled_mask;
  Compare(actual == expected, PriorityListText(actual), PfcImpact(expected, actual), &v);
  return v;
}

FieldVerdict DscpPrio(const std::map<uint8_t, uint8_t>& expected, const Observed<QosState>& dcb) {
  FieldVerdict v = Verdict(QosField::kDscpPrio, DscpMapText(expected));
  if (!FromSource(dcb, kNoDcb, &v)) return v;
  std::string actual = "{";
  std::vector<std::string> wrong;
  for (const auto& [dscp, prio] : expected) {
    std::vector<uint8_t> have = dcb.value.DscpPriorities(dscp);
    std::string text = have.empty() ? "none" : "";
    for (size_t i = 0; i < have.size(); ++i) text += fmt::format("{}{}", i ? "+" : "", have[i]);
    actual += fmt::format("{}{}: {}", actual.size() > 1 ? ", " : "", dscp, text);
    if (have.size() != 1 || have[0] != prio)
      wrong.push_back(fmt::format("DSCP {} -> {} (expected {})", dscp, text, prio));
  }
  std::string impact;
  for (const auto& w : wrong) impact += (impact.empty() ? "" : ", ") + w;
  Compare(wrong.empty(), actual + "}",
          impact +
              ": packets with these DSCPs are queued on the wrong priority (lossy, "
              "or CNPs delayed behind data)",
          &v);
  return v;
}

FieldVerdict PrioTc(const std::array<uint8_t, kNumPriorities>& expected,
                    const Observed<QosState>& dcb) {
  FieldVerdict v = Verdict(QosField::kPrioTc, ArrayText(expected));
  if (!FromSource(dcb, kNoDcb, &v)) return v;
  if (!dcb.value.ets) {
    MarkAbsent("absent (the driver returned no ieee_ets)", &v);
    return v;
  }
  Compare(dcb.value.ets->prio_tc == expected, ArrayText(dcb.value.ets->prio_tc),
          "priorities map to other traffic classes: RoCE shares a TC (and its bandwidth "
          "and buffer) with other traffic",
          &v);
  return v;
}

FieldVerdict Ets(const EtsPolicy& expected, const Observed<QosState>& dcb) {
  FieldVerdict v = Verdict(QosField::kEts, EtsText(expected.tsa, expected.bandwidth));
  if (!FromSource(dcb, kNoDcb, &v)) return v;
  if (!dcb.value.ets) {
    MarkAbsent("absent (the driver returned no ieee_ets)", &v);
    return v;
  }
  const EtsState& ets = *dcb.value.ets;
  bool equal = ets.tc_tsa == expected.tsa;
  // Bandwidth applies only to ETS TCs; drivers report arbitrary values for the others.
  for (int tc = 0; tc < kNumTcs && equal; ++tc)
    if (expected.tsa[tc] == IEEE_8021QAZ_TSA_ETS)
      equal = ets.tc_tx_bw[tc] == expected.bandwidth[tc];
  Compare(equal, EtsText(ets.tc_tsa, ets.tc_tx_bw),
          "the transmit scheduler differs: RoCE may get less bandwidth than planned, or "
          "strict TCs may starve others",
          &v);
  return v;
}

FieldVerdict Buffer(const BufferPolicy& expected, const Observed<QosState>& dcb) {
  const std::array<uint32_t, 8>* expected_size = expected.size ? &*expected.size : nullptr;
  FieldVerdict v = Verdict(QosField::kBuffer, BufferText(expected.prio_buffer, expected_size));
  if (!FromSource(dcb, kNoDcb, &v)) return v;
  if (!dcb.value.buffer) {
    MarkAbsent("absent (the driver returned no dcbnl_buffer)", &v);
    return v;
  }
  const BufferState& b = *dcb.value.buffer;
  bool equal =
      b.prio_buffer == expected.prio_buffer && (!expected.size || b.size == *expected.size);
  Compare(equal, BufferText(b.prio_buffer, expected_size ? &b.size : nullptr),
          "receive buffers differ: a lossless priority may share a buffer with lossy "
          "traffic or lack the headroom PFC needs; expect drops (rx_prio*_buf_discard)",
          &v);
  return v;
}

// The ToS of every RDMA port bound to the netdev must match; the first unreadable or absent port
// decides the verdict.
FieldVerdict RoceTos(uint8_t expected, const std::vector<PortTos>& ports) {
  FieldVerdict v = Verdict(QosField::kRoceTos, std::to_string(expected));
  if (ports.empty()) {
    MarkAbsent("absent (no RDMA port bound to this netdev)", &v);
    return v;
  }
  std::string actual;
  bool equal = true;
  bool unset = false;  // a port whose ToS differs only because no default is set at all
  for (const auto& port : ports) {
    Observed<uint8_t> tos = port.tos.Effective();
    std::string where = fmt::format("{}/{}", port.device, port.port);
    if (tos.failed()) {
      v.status = FieldStatus::kFailed;
      v.actual = fmt::format("{} unreadable: {}", where, tos.error);
      return v;
    }
    if (tos.absent()) {
      MarkAbsent(fmt::format("absent ({}: no MOFED traffic_class and no readable rdma_cm "
                             "default_roce_tos; see --qos.configfs-tos)",
                             where),
                 &v);
      return v;
    }
    equal = equal && tos.value == expected;
    if (TosUnset(port.tos) && tos.value != expected) {
      unset = true;
      actual += fmt::format("{}{}=not set", actual.empty() ? "" : ", ", where);
    } else {
      actual += fmt::format("{}{}={}", actual.empty() ? "" : ", ", where, tos.value);
    }
  }
  Compare(equal, actual, RoceTosImpact(expected, unset), &v);
  return v;
}

FieldVerdict TcpEcn(int expected, const Observed<int>& tcp_ecn) {
  FieldVerdict v = Verdict(QosField::kTcpEcn, std::to_string(expected));
  if (FromSource(tcp_ecn, "no /proc/sys/net/ipv4/tcp_ecn", &v))
    Compare(tcp_ecn.value == expected, std::to_string(tcp_ecn.value),
            "TCP does not negotiate ECN as planned: TCP flows sharing the fabric react to "
            "drops instead of marks",
            &v);
  return v;
}

FieldVerdict Mtu(uint32_t expected, const Observed<uint32_t>& mtu) {
  FieldVerdict v = Verdict(QosField::kMtu, std::to_string(expected));
  if (FromSource(mtu, "MTU unknown", &v))
    Compare(mtu.value == expected, std::to_string(mtu.value),
            "the RoCE path MTU follows the netdev MTU: a smaller MTU lowers throughput, a "
            "mismatch with the fabric drops packets",
            &v);
  return v;
}

FieldVerdict LinkSpeed(uint32_t minimum, const Observed<uint32_t>& speed) {
  FieldVerdict v = Verdict(QosField::kLinkSpeedMin, fmt::format(">= {} Mb/s", minimum));
  if (FromSource(speed, "no /sys/class/net/<if>/speed", &v))
    Compare(
        speed.value >= minimum,
        speed.value == 0 ? "no link (down or speed unknown)" : fmt::format("{} Mb/s", speed.value),
        "the port negotiated less than the fabric's speed (or has no link): a slow or "
        "missing rail stalls every collective that crosses it",
        &v);
  return v;
}

FieldVerdict SriovNumVfs(uint32_t expected, const Observed<uint32_t>& vfs) {
  FieldVerdict v = Verdict(QosField::kSriovNumVfs, std::to_string(expected));
  if (FromSource(vfs, "no SR-IOV on this function", &v))
    Compare(vfs.value == expected, std::to_string(vfs.value),
            "the VFs the node's pods or VMs attach to are not all there (or extra ones exist): "
            "jobs fail to get their RDMA device",
            &v);
  return v;
}

// CNP marking: MOFED's ecn/roce_np files; absent (not drift) where the driver has no ecn sysfs.
FieldVerdict Cnp(QosField field, uint8_t expected, const Observed<uint8_t>& observed) {
  const bool dscp = field == QosField::kCnpDscp;
  FieldVerdict v = Verdict(field, std::to_string(expected));
  if (!FromSource(observed,
                  dscp ? "no ecn/roce_np/cnp_dscp sysfs (MOFED) nor inbox cc_params "
                         "(--path.debugfs)"
                       : "no ecn/roce_np/cnp_802p_prio sysfs (MOFED) nor inbox cc_params "
                         "(--path.debugfs)",
                  &v))
    return v;
  Compare(observed.value == expected, std::to_string(observed.value),
          dscp ? "CNPs leave with another DSCP: the fabric may queue them behind data or drop "
                 "them, so senders slow down late (deeper queues, more PFC pauses)"
               : "CNPs leave on another priority: they may wait behind data or lose PFC "
                 "protection, so senders react late to congestion",
          &v);
  return v;
}

// Each listed parameter against its file. Without MOFED's ecn/ tree and without the opted-in
// inbox cc_params (docs/decisions.md) the field is absent, not drift; a file this driver version
// lacks is absent for that parameter only.
FieldVerdict DcqcnParams(const QosPolicy& policy, const Observed<roceqos::DcqcnParams>& observed,
                         std::vector<DcqcnParamVerdict>* details) {
  FieldVerdict v = Verdict(QosField::kDcqcnParams, DcqcnParamsText(policy));
  if (!FromSource(observed,
                  "no ecn/roce_rp, ecn/roce_np sysfs (MOFED) nor inbox cc_params (--path.debugfs)",
                  &v))
    return v;
  std::string actual, impact, missing;
  size_t known = 0;
  auto compare = [&](DcqcnRole dcqcn_role, const std::map<std::string, uint64_t>& want,
                     const std::map<std::string, uint64_t>& have) {
    const std::string_view role = DcqcnRoleName(dcqcn_role);
    for (const auto& [name, value] : want) {
      DcqcnParamVerdict d{dcqcn_role, name, FieldStatus::kInSync, value, 0};
      auto it = have.find(name);
      if (it == have.end()) {
        d.status = FieldStatus::kAbsent;
        missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", role, name);
      } else {
        ++known;
        d.actual = it->second;
        actual += fmt::format("{}{}/{}={}", actual.empty() ? "" : ", ", role, name, d.actual);
        if (d.actual != value) {
          d.status = FieldStatus::kDrift;
          impact += fmt::format("{}{}/{} {} (expected {})", impact.empty() ? "" : ", ", role, name,
                                d.actual, value);
        }
      }
      details->push_back(std::move(d));
    }
  };
  compare(DcqcnRole::kReactionPoint, policy.dcqcn_rp_params, observed.value.reaction_point);
  compare(DcqcnRole::kNotificationPoint, policy.dcqcn_np_params, observed.value.notification_point);
  if (!observed.value.errors.empty() && impact.empty()) {
    v.status = FieldStatus::kFailed;
    v.actual = "unreadable: " + observed.value.errors.front();
    return v;
  }
  if (known == 0) {
    MarkAbsent(fmt::format("absent (this driver has no {})", missing), &v);
    return v;
  }
  if (!missing.empty()) actual += fmt::format("; absent: {}", missing);
  Compare(impact.empty(), actual,
          impact +
              ": DCQCN reacts to congestion differently than tuned (rate increase/decrease "
              "steps, timers): expect other incast behaviour, queue depths and PFC pauses",
          &v);
  return v;
}

}  // namespace drift_check
}  // namespace roceqos
