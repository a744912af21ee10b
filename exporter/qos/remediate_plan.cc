#include "exporter/qos/remediate_plan.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>

#include <algorithm>

#include "exporter/qos/qos_fields.h"

namespace roceqos {
namespace {

std::string AppsText(const std::vector<DcbApp>& apps) {
  std::string out;
  for (const auto& a : apps)
    out += fmt::format("{}{}:{}", out.empty() ? "" : " ", a.protocol, a.priority);
  return out.empty() ? "none" : out;
}

bool Drifted(const DeviceDrift& drift, QosField field) {
  const FieldVerdict* v = drift.Find(field);
  return v != nullptr && v->status == FieldStatus::kDrift;
}

// ETS as the kernel accepts it: bandwidth only on ETS TCs (dcbnl_ieee_set rejects others).
EtsState SanitizedEts(EtsState ets) {
  for (int tc = 0; tc < kNumTcs; ++tc)
    if (ets.tc_tsa[tc] != IEEE_8021QAZ_TSA_ETS) ets.tc_tx_bw[tc] = 0;
  return ets;
}

DcbApp DscpApp(uint8_t dscp, uint8_t prio) { return DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, prio, dscp}; }

// ETS and prio_tc travel in one struct ieee_ets: one action covers both fields.
void PlanEts(const QosPolicy& policy, const QosState& state, const DeviceDrift& drift,
             std::vector<RemediationAction>& plan) {
  const bool prio_tc_drift = Drifted(drift, QosField::kPrioTc);
  const bool ets_drift = Drifted(drift, QosField::kEts);
  if (!state.ets || !(prio_tc_drift || ets_drift)) return;
  EtsState want = state.ets.value();
  if (policy.prio_tc) want.prio_tc = *policy.prio_tc;
  if (policy.ets) {
    want.tc_tsa = policy.ets->tsa;
    want.tc_tx_bw = policy.ets->bandwidth;
  }
  RemediationAction a;
  a.field = ets_drift ? QosField::kEts : QosField::kPrioTc;
  a.kind = RemediationAction::Kind::kDcbSet;
  a.dcb.ets = SanitizedEts(want);
  a.old_value = fmt::format("prio_tc {} tsa/bw {}/{}", ArrayText(state.ets->prio_tc),
                            ArrayText(state.ets->tc_tsa), ArrayText(state.ets->tc_tx_bw));
  a.new_value = fmt::format("prio_tc {} tsa/bw {}/{}", ArrayText(want.prio_tc),
                            ArrayText(want.tc_tsa), ArrayText(a.dcb.ets->tc_tx_bw));
  plan.push_back(std::move(a));
}

void PlanPfc(const QosPolicy& policy, const QosState& state, const DeviceDrift& drift,
             std::vector<RemediationAction>& plan) {
  if (state.pfc && Drifted(drift, QosField::kPfc) && policy.pfc) {
    RemediationAction a;
    a.field = QosField::kPfc;
    a.kind = RemediationAction::Kind::kDcbSet;
    PfcState want = *state.pfc;  // keep cap, mbc and the cable length (delay)
    want.enabled_mask = *policy.pfc;
    a.dcb.pfc = want;
    a.old_value = PriorityListText(state.pfc->enabled_mask);
    a.new_value = PriorityListText(want.enabled_mask);
    a.side_effect = FieldSpec(QosField::kPfc).side_effect;
    plan.push_back(std::move(a));
  }
}

void PlanBuffer(const QosPolicy& policy, const QosState& state, const DeviceDrift& drift,
                std::vector<RemediationAction>& plan) {
  if (state.buffer && Drifted(drift, QosField::kBuffer) && policy.buffer) {
    RemediationAction a;
    a.field = QosField::kBuffer;
    a.kind = RemediationAction::Kind::kDcbSetBuffer;
    a.buffer = policy.buffer;
    const BufferState want = BufferToSend(*policy.buffer, *state.buffer);
    a.old_value = fmt::format("prio_buffer {} size {}", ArrayText(state.buffer->prio_buffer),
                              ArrayText(state.buffer->size));
    a.new_value =
        fmt::format("prio_buffer {} size {}", ArrayText(want.prio_buffer),
                    policy.buffer->size ? ArrayText(want.size) : std::string("as the device has"));
    plan.push_back(std::move(a));
  }
}

// The DSCP APP entries to add and delete; trust follows them on mlx5 (first entry -> DSCP
// trust, last removed -> PCP).
struct AppChange {
  std::vector<DcbApp> add, remove;
  QosField field = QosField::kDscpPrio;
  std::string side_effect;
};

std::string TrustSideEffect(TrustMode to) {
  return fmt::format("trust changes to {}; {}", TrustModeName(to),
                     FieldSpec(QosField::kTrust).side_effect);
}

AppChange DiffApps(const QosPolicy& policy, const QosState& state, const DeviceDrift& drift) {
  AppChange c;
  if (Drifted(drift, QosField::kTrust) && policy.trust == TrustMode::kPcp) {
    c.field = QosField::kTrust;
    for (const auto& app : state.apps)
      if (app.selector == IEEE_8021QAZ_APP_SEL_DSCP) c.remove.push_back(app);
    c.side_effect = TrustSideEffect(TrustMode::kPcp);
  } else if (Drifted(drift, QosField::kTrust) && policy.trust == TrustMode::kDscp) {
    // As `mlnx_qos --trust dscp`: the default 64-entry map (DSCP d -> priority d/8), with the
    // policy's entries in place of the defaults.
    c.field = QosField::kTrust;
    for (uint8_t dscp = 0; dscp < kNumDscp; ++dscp) {
      uint8_t prio = static_cast<uint8_t>(dscp >> 3);
      if (policy.dscp_prio) {
        auto it = policy.dscp_prio->find(dscp);
        if (it != policy.dscp_prio->end()) prio = it->second;
      }
      c.add.push_back(DscpApp(dscp, prio));
    }
    c.side_effect = TrustSideEffect(TrustMode::kDscp);
  } else if (Drifted(drift, QosField::kDscpPrio) && policy.dscp_prio) {
    for (const auto& [dscp, prio] : *policy.dscp_prio) {
      std::vector<uint8_t> have = state.DscpPriorities(dscp);
      if (have.size() == 1 && have[0] == prio) continue;
      if (std::find(have.begin(), have.end(), prio) == have.end())
        c.add.push_back(DscpApp(dscp, prio));
      for (uint8_t old : have)
        if (old != prio) c.remove.push_back(DscpApp(dscp, old));
    }
  }
  return c;
}

void PlanApps(const QosPolicy& policy, const QosState& state, const DeviceDrift& drift,
              std::vector<RemediationAction>& plan) {
  AppChange c = DiffApps(policy, state, drift);
  if (!c.add.empty()) {
    RemediationAction a;
    a.field = c.field;
    a.kind = RemediationAction::Kind::kDcbSet;
    a.dcb.apps = c.add;
    a.old_value = fmt::format("dscp-prio {}", AppsText(c.remove));
    a.new_value = fmt::format("dscp-prio add {}", AppsText(c.add));
    a.side_effect = c.side_effect;
    plan.push_back(std::move(a));
  }
  if (!c.remove.empty()) {
    RemediationAction a;
    a.field = c.field;
    a.kind = RemediationAction::Kind::kDcbDeleteApps;
    a.dcb.apps = c.remove;
    a.old_value = fmt::format("dscp-prio {}", AppsText(c.remove));
    a.new_value = "dscp-prio del (those still present after the adds)";
    if (c.add.empty()) a.side_effect = c.side_effect;
    plan.push_back(std::move(a));
  }
}

void PlanDcqcn(const QosPolicy& policy, const ObservedQos& observed, const DeviceDrift& drift,
               std::vector<RemediationAction>& plan) {
  for (QosField field : {QosField::kDcqcnNp, QosField::kDcqcnRp}) {
    const bool np = field == QosField::kDcqcnNp;
    const std::optional<uint8_t>& want = np ? policy.dcqcn_np : policy.dcqcn_rp;
    if (!want || !Drifted(drift, field)) continue;
    const auto& enabled = np ? observed.dcqcn.np_enabled : observed.dcqcn.rp_enabled;
    for (int prio = 0; prio < kNumPriorities; ++prio) {
      // Only the listed priorities are enabled; others are never switched off (not checked).
      const bool target = (*want >> prio) & 1;
      if (!target || !enabled[prio].ok() || enabled[prio].value) continue;
      RemediationAction a;
      a.field = field;
      a.kind = RemediationAction::Kind::kDcqcnEnable;
      a.np = np;
      a.prio = prio;
      a.enable = target;
      a.old_value = fmt::format("ecn/{}/enable/{}={}", DcqcnRoleName(DcqcnRoleOf(np)), prio,
                                enabled[prio].value ? 1 : 0);
      a.new_value = fmt::format("{}", target ? 1 : 0);
      plan.push_back(std::move(a));
    }
  }
}

// CNP marking: one sysfs write per drifted file (ecn/roce_np/cnp_dscp, cnp_802p_prio).
void PlanCnp(const QosPolicy& policy, const ObservedQos& observed, const DeviceDrift& drift,
             std::vector<RemediationAction>& plan) {
  struct Cnp {
    QosField field;
    const std::optional<uint8_t>& want;
    const Observed<uint8_t>& have;
    std::string_view file;
  };
  for (const Cnp& c :
       {Cnp{QosField::kCnpDscp, policy.cnp_dscp, observed.dcqcn.cnp_dscp, "cnp_dscp"},
        Cnp{QosField::kCnpPrio, policy.cnp_802p_prio, observed.dcqcn.cnp_802p_prio,
            "cnp_802p_prio"}}) {
    if (!c.want || !c.have.ok() || !Drifted(drift, c.field)) continue;
    RemediationAction a;
    a.field = c.field;
    a.kind = RemediationAction::Kind::kDcqcnParam;
    a.np = true;
    a.param = std::string(c.file);
    a.param_value = *c.want;
    a.old_value = fmt::format("ecn/roce_np/{}={}", c.file, c.have.value);
    a.new_value = std::to_string(*c.want);
    plan.push_back(std::move(a));
  }
}

// DCQCN parameters: one sysfs write per listed parameter whose file exists and differs.
void PlanDcqcnParams(const QosPolicy&, const ObservedQos&, const DeviceDrift& drift,
                     std::vector<RemediationAction>& plan) {
  if (!Drifted(drift, QosField::kDcqcnParams)) return;
  for (const DcqcnParamVerdict& d : drift.dcqcn_params) {
    if (d.status != FieldStatus::kDrift) continue;
    RemediationAction a;
    a.field = QosField::kDcqcnParams;
    a.kind = RemediationAction::Kind::kDcqcnParam;
    a.np = d.role == DcqcnRole::kNotificationPoint;
    a.param = d.name;
    a.param_value = d.expected;
    a.old_value = fmt::format("ecn/{}/{}={}", DcqcnRoleName(d.role), d.name, d.actual);
    a.new_value = std::to_string(d.expected);
    plan.push_back(std::move(a));
  }
}

void PlanRoceTos(const QosPolicy& policy, const ObservedQos& observed, const DeviceDrift& drift,
                 std::vector<RemediationAction>& plan) {
  if (!policy.roce_tos || !Drifted(drift, QosField::kRoceTos)) return;
  for (const auto& port : observed.roce_tos) {
    // Only the MOFED per-device traffic_class: writing rdma_cm configfs needs a mkdir that
    // changes RDMA-CM defaults for every consumer, which is not ours to do silently.
    if (!port.tos.mofed_tclass.ok()) continue;
    Observed<uint8_t> tos = port.tos.Effective();
    if (tos.ok() && tos.value == *policy.roce_tos) continue;
    RemediationAction a;
    a.field = QosField::kRoceTos;
    a.kind = RemediationAction::Kind::kRoceTos;
    a.rdma_device = port.device;
    a.port = port.port;
    a.value = *policy.roce_tos;
    a.old_value = fmt::format("{}/{} tclass {}", port.device, port.port,
                              tos.ok() ? std::to_string(tos.value) : "unset");
    a.new_value = std::to_string(*policy.roce_tos);
    a.side_effect = FieldSpec(QosField::kRoceTos).side_effect;
    plan.push_back(std::move(a));
  }
}

void PlanTcpEcn(const QosPolicy& policy, const ObservedQos& observed, const DeviceDrift& drift,
                std::vector<RemediationAction>& plan) {
  if (policy.tcp_ecn && Drifted(drift, QosField::kTcpEcn) && observed.tcp_ecn.ok()) {
    RemediationAction a;
    a.field = QosField::kTcpEcn;
    a.kind = RemediationAction::Kind::kTcpEcn;
    a.value = *policy.tcp_ecn;
    a.old_value = std::to_string(observed.tcp_ecn.value);
    a.new_value = std::to_string(*policy.tcp_ecn);
    plan.push_back(std::move(a));
  }
}

// The DCB steps plan from the device's DCB read; without one (no dcbnl_ops, a failed read) they
// plan nothing.
template <void (*Step)(const QosPolicy&, const QosState&, const DeviceDrift&,
                       std::vector<RemediationAction>&)>
void FromDcb(const QosPolicy& policy, const ObservedQos& observed, const DeviceDrift& drift,
             std::vector<RemediationAction>& plan) {
  if (observed.dcb.ok()) Step(policy, observed.dcb.value, drift, plan);
}

using PlanStep = void (*)(const QosPolicy&, const ObservedQos&, const DeviceDrift&,
                          std::vector<RemediationAction>&);
// Indexed by WriteStep (qos_fields.h), which orders them: consecutive DCB sets go out as one
// RTM_SETDCB, in the kernel's own order (ETS, PFC, buffer, APP): see Execute.
constexpr PlanStep kPlanSteps[] = {FromDcb<PlanEts>,  FromDcb<PlanPfc>, FromDcb<PlanBuffer>,
                                   FromDcb<PlanApps>, PlanDcqcn,        PlanCnp,
                                   PlanDcqcnParams,   PlanRoceTos,      PlanTcpEcn};
static_assert(std::size(kPlanSteps) == kNumWriteSteps, "one plan step per WriteStep");

}  // namespace

BufferState BufferToSend(const BufferPolicy& policy, const BufferState& now) {
  BufferState want = now;
  want.prio_buffer = policy.prio_buffer;
  if (policy.size) want.size = *policy.size;
  return want;
}

bool Remediable(QosField field) { return FieldSpec(field).Remediable(); }

std::vector<RemediationAction> PlanRemediation(const QosPolicy& policy, const ObservedQos& observed,
                                               const DeviceDrift& drift) {
  std::vector<RemediationAction> plan;
  for (PlanStep step : kPlanSteps) step(policy, observed, drift, plan);
  return plan;
}

std::string DescribeAction(const RemediationAction& action) {
  return fmt::format("{}: {} -> {}", QosFieldName(action.field), action.old_value,
                     action.new_value);
}

bool FullyInSync(const DeviceDrift& drift) {
  for (const FieldVerdict& v : drift.fields)
    if (Remediable(v.field) && v.status != FieldStatus::kInSync) return false;
  return true;
}

}  // namespace roceqos
