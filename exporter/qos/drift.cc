#include "exporter/qos/drift.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>

#include <algorithm>

#include "exporter/core/log_event.h"

namespace roceqos {
namespace {

std::string EtsText(const std::array<uint8_t, kNumTcs>& tsa,
                    const std::array<uint8_t, kNumTcs>& bw) {
  return fmt::format("tsa {} bandwidth {}", TsaListText(tsa), ArrayText(bw));
}

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
  for (int p = 0; p < 8; ++p) {
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
Observed<uint8_t> DcqcnMask(const std::array<Observed<bool>, 8>& enabled) {
  uint8_t mask = 0;
  int absent = 0;
  for (int p = 0; p < 8; ++p) {
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

// DCQCN must be enabled on the listed priorities; others are not checked (MOFED enables every
// priority by default, and an enable where no RoCE runs is harmless).
FieldVerdict CheckDcqcn(QosField field, uint8_t expected, const std::array<Observed<bool>, 8>& en) {
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

}  // namespace

std::string_view QosFieldName(QosField field) {
  switch (field) {
    case QosField::kTrust:
      return "trust";
    case QosField::kPfc:
      return "pfc";
    case QosField::kDscpPrio:
      return "dscp_prio";
    case QosField::kPrioTc:
      return "prio_tc";
    case QosField::kEts:
      return "ets";
    case QosField::kBuffer:
      return "buffer";
    case QosField::kRoceTos:
      return "roce_tos";
    case QosField::kDcqcnNp:
      return "dcqcn_np";
    case QosField::kDcqcnRp:
      return "dcqcn_rp";
    case QosField::kTcpEcn:
      return "tcp_ecn";
    case QosField::kMtu:
      return "mtu";
  }
  return "unknown";
}

std::string_view FieldStatusName(FieldStatus status) {
  switch (status) {
    case FieldStatus::kInSync:
      return "in_sync";
    case FieldStatus::kDrift:
      return "drift";
    case FieldStatus::kAbsent:
      return "absent";
    case FieldStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

bool DeviceDrift::InSync() const {
  return std::all_of(fields.begin(), fields.end(), [](const FieldVerdict& v) {
    return v.status == FieldStatus::kInSync || v.status == FieldStatus::kAbsent;
  });
}

size_t DeviceDrift::Unverifiable() const {
  return static_cast<size_t>(std::count_if(fields.begin(), fields.end(), [](const FieldVerdict& v) {
    return v.status == FieldStatus::kAbsent;
  }));
}

const FieldVerdict* DeviceDrift::Find(QosField field) const {
  for (const auto& v : fields)
    if (v.field == field) return &v;
  return nullptr;
}

DeviceDrift EvaluateDrift(const QosPolicy& policy, const ObservedQos& observed) {
  DeviceDrift drift;
  const Observed<QosState>& dcb = observed.dcb;
  constexpr std::string_view kNoDcb = "no DCB on this device (EOPNOTSUPP)";

  if (policy.trust) {
    FieldVerdict v = Verdict(QosField::kTrust, std::string(TrustModeName(*policy.trust)));
    if (FromSource(dcb, kNoDcb, &v)) {
      TrustMode actual = dcb.value.Trust();
      Compare(actual == *policy.trust, std::string(TrustModeName(actual)),
              *policy.trust == TrustMode::kDscp
                  ? "the NIC classifies by VLAN PCP instead of DSCP: untagged RoCEv2 traffic "
                    "lands on priority 0, without PFC and ECN; expect drops and retransmissions"
                  : "the NIC classifies by DSCP while the fabric expects PCP: traffic may land on "
                    "unexpected priorities",
              &v);
    }
    drift.fields.push_back(std::move(v));
  }

  if (policy.pfc) {
    FieldVerdict v = Verdict(QosField::kPfc, PriorityListText(*policy.pfc));
    if (FromSource(dcb, kNoDcb, &v)) {
      if (!dcb.value.pfc) {
        v.status = FieldStatus::kAbsent;
        v.actual = "absent (the driver returned no ieee_pfc)";
      } else {
        uint8_t actual = dcb.value.pfc->enabled_mask;
        Compare(actual == *policy.pfc, PriorityListText(actual), PfcImpact(*policy.pfc, actual),
                &v);
      }
    }
    drift.fields.push_back(std::move(v));
  }

  if (policy.dscp_prio) {
    std::string expected = "{";
    for (const auto& [dscp, prio] : *policy.dscp_prio)
      expected += fmt::format("{}{}: {}", expected.size() > 1 ? ", " : "", dscp, prio);
    FieldVerdict v = Verdict(QosField::kDscpPrio, expected + "}");
    if (FromSource(dcb, kNoDcb, &v)) {
      std::string actual = "{";
      std::vector<std::string> wrong;
      for (const auto& [dscp, prio] : *policy.dscp_prio) {
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
    }
    drift.fields.push_back(std::move(v));
  }

  if (policy.prio_tc) {
    FieldVerdict v = Verdict(QosField::kPrioTc, ArrayText(*policy.prio_tc));
    if (FromSource(dcb, kNoDcb, &v)) {
      if (!dcb.value.ets) {
        v.status = FieldStatus::kAbsent;
        v.actual = "absent (the driver returned no ieee_ets)";
      } else {
        Compare(dcb.value.ets->prio_tc == *policy.prio_tc, ArrayText(dcb.value.ets->prio_tc),
                "priorities map to other traffic classes: RoCE shares a TC (and its bandwidth "
                "and buffer) with other traffic",
                &v);
      }
    }
    drift.fields.push_back(std::move(v));
  }

  if (policy.ets) {
    FieldVerdict v = Verdict(QosField::kEts, EtsText(policy.ets->tsa, policy.ets->bandwidth));
    if (FromSource(dcb, kNoDcb, &v)) {
      if (!dcb.value.ets) {
        v.status = FieldStatus::kAbsent;
        v.actual = "absent (the driver returned no ieee_ets)";
      } else {
        const EtsState& ets = *dcb.value.ets;
        bool equal = ets.tc_tsa == policy.ets->tsa;
        // Bandwidth applies only to ETS TCs; drivers report arbitrary values for the others.
        for (int tc = 0; tc < kNumTcs && equal; ++tc)
          if (policy.ets->tsa[tc] == IEEE_8021QAZ_TSA_ETS)
            equal = ets.tc_tx_bw[tc] == policy.ets->bandwidth[tc];
        Compare(equal, EtsText(ets.tc_tsa, ets.tc_tx_bw),
                "the transmit scheduler differs: RoCE may get less bandwidth than planned, or "
                "strict TCs may starve others",
                &v);
      }
    }
    drift.fields.push_back(std::move(v));
  }

  if (policy.buffer) {
    std::string expected = "prio_buffer " + ArrayText(policy.buffer->prio_buffer);
    if (policy.buffer->size) expected += " size " + ArrayText(*policy.buffer->size);
    FieldVerdict v = Verdict(QosField::kBuffer, expected);
    if (FromSource(dcb, kNoDcb, &v)) {
      if (!dcb.value.buffer) {
        v.status = FieldStatus::kAbsent;
        v.actual = "absent (the driver returned no dcbnl_buffer)";
      } else {
        const BufferState& b = *dcb.value.buffer;
        bool equal = b.prio_buffer == policy.buffer->prio_buffer &&
                     (!policy.buffer->size || b.size == *policy.buffer->size);
        std::string actual = "prio_buffer " + ArrayText(b.prio_buffer);
        if (policy.buffer->size) actual += " size " + ArrayText(b.size);
        Compare(equal, actual,
                "receive buffers differ: a lossless priority may share a buffer with lossy "
                "traffic or lack the headroom PFC needs; expect drops (rx_prio*_buf_discard)",
                &v);
      }
    }
    drift.fields.push_back(std::move(v));
  }

  if (policy.roce_tos) {
    FieldVerdict v = Verdict(QosField::kRoceTos, std::to_string(*policy.roce_tos));
    if (observed.roce_tos.empty()) {
      v.status = FieldStatus::kAbsent;
      v.actual = "absent (no RDMA port bound to this netdev)";
    } else {
      std::string actual;
      bool equal = true;
      for (const auto& port : observed.roce_tos) {
        Observed<uint8_t> tos = port.tos.Effective();
        std::string where = fmt::format("{}/{}", port.device, port.port);
        if (tos.failed()) {
          v.status = FieldStatus::kFailed;
          v.actual = fmt::format("{} unreadable: {}", where, tos.error);
          break;
        }
        if (tos.absent()) {
          v.status = FieldStatus::kAbsent;
          v.actual = fmt::format(
              "absent ({}: no MOFED traffic_class and no readable rdma_cm "
              "default_roce_tos; see --qos.configfs-tos)",
              where);
          break;
        }
        equal = equal && tos.value == *policy.roce_tos;
        actual += fmt::format("{}{}={}", actual.empty() ? "" : ", ", where, tos.value);
      }
      if (v.status == FieldStatus::kInSync)
        Compare(equal, actual,
                fmt::format("RoCE QPs are created with another ToS: their DSCP ({}) is not the "
                            "lossless class and/or ECN is not ECT, so no PFC and no DCQCN",
                            *policy.roce_tos >> 2),
                &v);
    }
    drift.fields.push_back(std::move(v));
  }

  if (policy.dcqcn_np)
    drift.fields.push_back(
        CheckDcqcn(QosField::kDcqcnNp, *policy.dcqcn_np, observed.dcqcn.np_enabled));
  if (policy.dcqcn_rp)
    drift.fields.push_back(
        CheckDcqcn(QosField::kDcqcnRp, *policy.dcqcn_rp, observed.dcqcn.rp_enabled));

  if (policy.tcp_ecn) {
    FieldVerdict v = Verdict(QosField::kTcpEcn, std::to_string(*policy.tcp_ecn));
    if (FromSource(observed.tcp_ecn, "no /proc/sys/net/ipv4/tcp_ecn", &v))
      Compare(observed.tcp_ecn.value == *policy.tcp_ecn, std::to_string(observed.tcp_ecn.value),
              "TCP does not negotiate ECN as planned: TCP flows sharing the fabric react to "
              "drops instead of marks",
              &v);
    drift.fields.push_back(std::move(v));
  }

  if (policy.mtu) {
    FieldVerdict v = Verdict(QosField::kMtu, std::to_string(*policy.mtu));
    if (FromSource(observed.mtu, "MTU unknown", &v))
      Compare(observed.mtu.value == *policy.mtu, std::to_string(observed.mtu.value),
              "the RoCE path MTU follows the netdev MTU: a smaller MTU lowers throughput, a "
              "mismatch with the fabric drops packets",
              &v);
    drift.fields.push_back(std::move(v));
  }
  return drift;
}

std::string StateFingerprint(const ObservedQos& o) {
  std::string canonical;
  auto add = [&](std::string_view key, const std::string& value) {
    canonical += fmt::format("{}={};", key, value);
  };
  if (o.dcb.ok()) {
    const QosState& s = o.dcb.value;
    add("trust", std::string(TrustModeName(s.Trust())));
    if (s.pfc) add("pfc", fmt::format("{}/{}", s.pfc->enabled_mask, s.pfc->delay));
    if (s.ets) add("ets", EtsText(s.ets->tc_tsa, s.ets->tc_tx_bw) + ArrayText(s.ets->prio_tc));
    if (s.buffer) add("buffer", ArrayText(s.buffer->prio_buffer) + ArrayText(s.buffer->size));
    if (s.maxrate_kbps) add("maxrate", ArrayText(*s.maxrate_kbps));
    std::string apps;
    for (const auto& a : s.apps)
      apps += fmt::format("{}:{}:{},", a.selector, a.protocol, a.priority);
    add("apps", apps);
    if (s.dcbx) add("dcbx", std::to_string(*s.dcbx));
  } else {
    add("dcb", o.dcb.absent() ? "absent" : "failed");
  }
  auto obs = [](const auto& x) {
    return x.ok() ? fmt::format("{}", x.value) : std::string(x.absent() ? "-" : "?");
  };
  std::string dcqcn;
  for (int p = 0; p < 8; ++p) dcqcn += obs(o.dcqcn.np_enabled[p]) + obs(o.dcqcn.rp_enabled[p]);
  add("dcqcn", dcqcn);
  add("cnp", obs(o.dcqcn.cnp_dscp) + "/" + obs(o.dcqcn.cnp_802p_prio));
  for (const auto& port : o.roce_tos)
    add("tos:" + port.device + "/" + std::to_string(port.port), obs(port.tos.Effective()));
  add("tcp_ecn", obs(o.tcp_ecn));
  add("mtu", obs(o.mtu));
  add("storm", obs(o.pfc_storm_timeout_ms));
  return Fnv1a64Hex(canonical);
}

const DriftTracker::DeviceHistory& DriftTracker::Record(const std::string& netdev,
                                                        const DeviceDrift& drift,
                                                        const std::string& state_fingerprint,
                                                        std::chrono::system_clock::time_point now) {
  DeviceHistory& h = devices_[netdev];
  for (const auto& v : drift.fields) {
    if (!v.Known()) continue;  // unreadable or unverifiable: keep the last known state
    bool drifted = v.Drifted();
    auto [it, first] = h.drifted.try_emplace(v.field, false);
    if (drifted && (first || !it->second)) ++h.drift_events[v.field];
    h.drift_events.try_emplace(v.field, 0);
    FieldLogState& log = h.log[v.field];
    if (!first && it->second != drifted) ++log.unlogged_transitions;
    it->second = drifted;
    LogDriftChange(netdev, v, now, log);
  }
  if (h.state_fingerprint != state_fingerprint) {
    h.state_fingerprint = state_fingerprint;
    h.last_change = now;
  }
  return h;
}

void DriftTracker::LogDriftChange(const std::string& netdev, const FieldVerdict& verdict,
                                  std::chrono::system_clock::time_point now, FieldLogState& log) {
  const bool drifted = verdict.Drifted();
  if (drifted == log.drifted) return;  // the log already says so (a flap is counted, not lost)
  if (log.at != std::chrono::system_clock::time_point{} && now - log.at < kLogInterval) return;
  // The transition that brought the field here is part of this line, not an unlogged one.
  const uint64_t unlogged = log.unlogged_transitions > 0 ? log.unlogged_transitions - 1 : 0;
  LogEvent(drifted ? spdlog::level::warn : spdlog::level::info,
           drifted ? "qos field drift started" : "qos field drift ended",
           {{"netdev", netdev},
            {"field", QosFieldName(verdict.field)},
            {"expected", verdict.expected},
            {"actual", verdict.actual},
            {"unlogged_transitions", unlogged}});
  log = {drifted, now, 0};
}

void DriftTracker::Retain(const std::vector<std::string>& present) {
  for (auto it = devices_.begin(); it != devices_.end();) {
    if (std::find(present.begin(), present.end(), it->first) == present.end())
      it = devices_.erase(it);
    else
      ++it;
  }
}

const DriftTracker::DeviceHistory* DriftTracker::Find(const std::string& netdev) const {
  auto it = devices_.find(netdev);
  return it == devices_.end() ? nullptr : &it->second;
}

}  // namespace roceqos
