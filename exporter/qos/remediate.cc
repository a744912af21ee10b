#include "exporter/qos/remediate.h"

#include <fmt/format.h>
#include <linux/capability.h>
#include <linux/dcbnl.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "collectors/enum_names.h"
#include "collectors/log_event.h"

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

constexpr EnumName<RemediationMode> kModeNames[] = {
    {RemediationMode::kOff, "off"},
    {RemediationMode::kDryRun, "dry-run"},
    {RemediationMode::kEnforce, "enforce"},
};

constexpr EnumName<RemediationState> kStateNames[] = {
    {RemediationState::kInSync, "in_sync"},
    {RemediationState::kActed, "acted"},
    {RemediationState::kBackoff, "backoff"},
    {RemediationState::kGaveUp, "gave_up"},
    {RemediationState::kDryRun, "dry_run"},
    {RemediationState::kObserveOnly, "observe_only"},
    {RemediationState::kBlockedNotPf, "blocked_not_pf"},
    {RemediationState::kBlockedBond, "blocked_bond"},
    {RemediationState::kBlockedDown, "blocked_down"},
    {RemediationState::kBlockedDriverNotReady, "blocked_driver_not_ready"},
    {RemediationState::kBlockedStorm, "blocked_storm"},
    {RemediationState::kBlockedUnknownStorm, "blocked_unknown_storm"},
    {RemediationState::kBlockedPolicyUnresolved, "blocked_policy_unresolved"},
    {RemediationState::kBlockedStateUnavailable, "blocked_state_unavailable"},
    {RemediationState::kBlockedApplyStuck, "blocked_apply_stuck"},
};

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

void PlanPfcAndBuffer(const QosPolicy& policy, const QosState& state, const DeviceDrift& drift,
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
    a.side_effect =
        "the link flaps on mlx5 (mlx5_toggle_port_link) and port buffers may be resized";
    plan.push_back(std::move(a));
  }
  if (state.buffer && Drifted(drift, QosField::kBuffer) && policy.buffer) {
    RemediationAction a;
    a.field = QosField::kBuffer;
    a.kind = RemediationAction::Kind::kDcbSet;
    BufferState want = *state.buffer;
    want.prio_buffer = policy.buffer->prio_buffer;
    if (policy.buffer->size) want.size = *policy.buffer->size;
    a.dcb.buffer = want;
    a.old_value = fmt::format("prio_buffer {} size {}", ArrayText(state.buffer->prio_buffer),
                              ArrayText(state.buffer->size));
    a.new_value =
        fmt::format("prio_buffer {} size {}", ArrayText(want.prio_buffer), ArrayText(want.size));
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

AppChange DiffApps(const QosPolicy& policy, const QosState& state, const DeviceDrift& drift) {
  AppChange c;
  if (Drifted(drift, QosField::kTrust) && policy.trust == TrustMode::kPcp) {
    c.field = QosField::kTrust;
    for (const auto& app : state.apps)
      if (app.selector == IEEE_8021QAZ_APP_SEL_DSCP) c.remove.push_back(app);
    c.side_effect = "trust changes to pcp; mlx5 may restart its channels";
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
    c.side_effect = "trust changes to dscp; mlx5 may restart its channels";
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
      a.old_value = fmt::format("ecn/{}/enable/{}={}", np ? "roce_np" : "roce_rp", prio,
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
void PlanDcqcnParams(const DeviceDrift& drift, std::vector<RemediationAction>& plan) {
  if (!Drifted(drift, QosField::kDcqcnParams)) return;
  for (const DcqcnParamVerdict& d : drift.dcqcn_params) {
    if (d.status != FieldStatus::kDrift) continue;
    RemediationAction a;
    a.field = QosField::kDcqcnParams;
    a.kind = RemediationAction::Kind::kDcqcnParam;
    a.np = d.role == "roce_np";
    a.param = d.name;
    a.param_value = d.expected;
    a.old_value = fmt::format("ecn/{}/{}={}", d.role, d.name, d.actual);
    a.new_value = std::to_string(d.expected);
    plan.push_back(std::move(a));
  }
}

void PlanTosAndTcpEcn(const QosPolicy& policy, const ObservedQos& observed,
                      const DeviceDrift& drift, std::vector<RemediationAction>& plan) {
  if (policy.roce_tos && Drifted(drift, QosField::kRoceTos)) {
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
      a.side_effect = "running RC QPs are moved to the new class (RTS2RTS) where firmware allows";
      plan.push_back(std::move(a));
    }
  }
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

}  // namespace

Result<RemediationMode> ParseRemediationMode(std::string_view text) {
  if (auto mode = ValueOf(kModeNames, text)) return *mode;
  return MakeError(EINVAL,
                   fmt::format("--remediation: \"{}\" is not one of off, dry-run, enforce", text));
}

std::string_view RemediationModeName(RemediationMode mode) {
  return NameOf(kModeNames, mode, "off");
}

std::string_view RemediationStateName(RemediationState state) { return NameOf(kStateNames, state); }

std::optional<RemediationState> CheckGuardrails(const DeviceContext& context) {
  // Bond first: a bond member is also a PF, and the LAG device name is the stronger signal.
  if (context.role == DeviceRole::kBondMember || context.role == DeviceRole::kBond)
    return RemediationState::kBlockedBond;
  for (const auto& rdma : context.rdma_devices)
    if (rdma.rfind("mlx5_bond_", 0) == 0) return RemediationState::kBlockedBond;
  if (context.role != DeviceRole::kPf) return RemediationState::kBlockedNotPf;
  if (!context.oper_up) return RemediationState::kBlockedDown;
  if (!context.driver_ready) return RemediationState::kBlockedDriverNotReady;
  if (!context.policy_resolved) return RemediationState::kBlockedPolicyUnresolved;
  if (context.storm == StormGuard::kStorm) return RemediationState::kBlockedStorm;
  if (context.storm == StormGuard::kUnknown) return RemediationState::kBlockedUnknownStorm;
  return std::nullopt;
}

std::string DeviceIdentity(const Device& device) {
  if (!device.pci_address.empty()) return "pci:" + device.pci_address;
  return "netdev:" + device.name;
}

bool Remediable(QosField field) {
  return field != QosField::kMtu && field != QosField::kLinkSpeedMin &&
         field != QosField::kSriovNumVfs;
}

std::vector<RemediationAction> PlanRemediation(const QosPolicy& policy, const ObservedQos& observed,
                                               const DeviceDrift& drift) {
  std::vector<RemediationAction> plan;
  if (observed.dcb.ok()) {
    // Consecutive DCB sets go out as one RTM_SETDCB, in the kernel's own order (ETS, PFC,
    // buffer, APP): see Execute.
    PlanEts(policy, observed.dcb.value, drift, plan);
    PlanPfcAndBuffer(policy, observed.dcb.value, drift, plan);
    PlanApps(policy, observed.dcb.value, drift, plan);
  }
  PlanDcqcn(policy, observed, drift, plan);
  PlanCnp(policy, observed, drift, plan);
  PlanDcqcnParams(drift, plan);
  PlanTosAndTcpEcn(policy, observed, drift, plan);
  return plan;
}

std::string DescribeAction(const RemediationAction& action) {
  return fmt::format("{}: {} -> {}", QosFieldName(action.field), action.old_value,
                     action.new_value);
}

// One action's fate: sent (and how the kernel answered), skipped after an earlier failure, or
// deferred to the next pass by the apply budget.
struct Remediator::Outcome {
  const RemediationAction* action = nullptr;
  enum class Sent : uint8_t { kWritten, kFailed, kSkipped, kDeferred, kNotNeeded };
  Sent sent = Sent::kSkipped;
  std::string error;
};

namespace {

// The writes in the order they go out: consecutive DCB sets merged into one DcbWrite, so the
// parts of one device travel in a single RTM_SETDCB (dcbnl_ieee_set applies ETS, PFC, buffer
// and APP in that order and stops at the first error; docs/remediation.md).
struct Batch {
  std::vector<size_t> actions;  // indices into the plan
  DcbWrite dcb;
};

std::vector<Batch> Batches(const std::vector<RemediationAction>& plan) {
  std::vector<Batch> batches;
  for (size_t i = 0; i < plan.size(); ++i) {
    const RemediationAction& a = plan[i];
    const bool dcb_set = a.kind == RemediationAction::Kind::kDcbSet;
    if (dcb_set && !batches.empty() && !batches.back().actions.empty() &&
        plan[batches.back().actions.back()].kind == RemediationAction::Kind::kDcbSet) {
      Batch& b = batches.back();
      if (a.dcb.ets) b.dcb.ets = a.dcb.ets;
      if (a.dcb.pfc) b.dcb.pfc = a.dcb.pfc;
      if (a.dcb.buffer) b.dcb.buffer = a.dcb.buffer;
      b.dcb.apps.insert(b.dcb.apps.end(), a.dcb.apps.begin(), a.dcb.apps.end());
      b.actions.push_back(i);
      continue;
    }
    batches.push_back(Batch{{i}, a.dcb});
  }
  return batches;
}

// Add-before-delete: the driver may already have replaced the old entry (mlx5 keeps one priority
// per DSCP); delete only what a read taken now still shows, or IEEE_DEL fails with ENOENT.
std::vector<DcbApp> StillPresent(const std::vector<DcbApp>& apps, const ObservedQos& now) {
  std::vector<DcbApp> still;
  if (!now.dcb.ok()) return still;
  for (const auto& app : apps)
    if (std::find(now.dcb.value.apps.begin(), now.dcb.value.apps.end(), app) !=
        now.dcb.value.apps.end())
      still.push_back(app);
  return still;
}

}  // namespace

Remediator::Remediator(RemediationOptions options, QosWriter* writer, RemediationStore* store,
                       Now now)
    : options_(options), writer_(writer), store_(store), now_(std::move(now)) {
  if (store_ == nullptr) return;
  Result<PersistedState> loaded = store_->Load();
  if (!loaded) {
    // Starting empty is the only way forward; the next save replaces the bad file.
    LogEvent(spdlog::level::err, "remediation state unreadable; starting without it",
             {{"error", loaded.error().message}});
    return;
  }
  restored_ = *loaded;
  saved_ = *loaded;
  for (const auto& [netdev, d] : restored_)
    if (d.apply_in_progress)
      LogEvent(spdlog::level::warn,
               "remediation: the previous process ended in the middle of an apply; the device "
               "may be half-written: it is re-read and re-planned from what it shows now",
               {{"netdev", netdev}, {"attempt", d.attempts}});
}

const Remediator::DeviceStatus* Remediator::Status(const std::string& netdev) const {
  auto it = devices_.find(netdev);
  return it == devices_.end() ? nullptr : &it->second;
}

void Remediator::BeginPass() {
  pass_started_.reset();
  wrote_this_pass_ = false;
  tcp_ecn_written_this_pass_ = false;
}

void Remediator::StartOver(const std::string& netdev, const std::string& policy_hash,
                           DeviceStatus* status) {
  if (!status->policy_hash.empty())
    LogEvent(spdlog::level::info, "remediation: effective policy changed, attempts start over",
             {{"netdev", netdev}});
  status->policy_hash = policy_hash;
  status->attempts = 0;
  status->next_allowed.reset();
  status->last_dry_run_plan.clear();
  status->gave_up = false;
}

void Remediator::Restore(const std::string& netdev, Clock::time_point now, DeviceStatus& status) {
  auto it = restored_.find(netdev);
  if (it == restored_.end()) return;
  const PersistedDevice& d = it->second;
  status.policy_hash = d.policy_hash;
  status.attempts = d.attempts;
  status.gave_up = d.gave_up;
  status.interrupted_apply = d.apply_in_progress;
  if (d.next_allowed) {
    // The file holds wall-clock time; the state machine runs on the monotonic clock.
    const auto left = *d.next_allowed - std::chrono::system_clock::now();
    status.next_allowed = now + std::chrono::duration_cast<Clock::duration>(left);
  }
  restored_.erase(it);
}

void Remediator::Persist() {
  if (store_ == nullptr) return;
  PersistedState state = restored_;  // devices not seen yet keep their record
  const auto steady = step_now_;     // the clock next_allowed was computed on
  const auto wall = std::chrono::system_clock::now();
  for (const auto& [netdev, st] : devices_) {
    if (st.policy_hash.empty()) continue;
    PersistedDevice& d = state[netdev];
    d.policy_hash = st.policy_hash;
    d.attempts = st.attempts;
    d.gave_up = st.gave_up;
    d.apply_in_progress = st.apply_in_progress;
    if (st.next_allowed)
      d.next_allowed = wall + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                  *st.next_allowed - steady);
  }
  // Seconds-level jitter of next_allowed alone is not worth a write.
  auto same = [](const PersistedState& a, const PersistedState& b) {
    if (a.size() != b.size()) return false;
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      PersistedDevice x = ia->second, y = ib->second;
      if (x.next_allowed && y.next_allowed &&
          std::chrono::abs(*x.next_allowed - *y.next_allowed) < std::chrono::seconds(2))
        x.next_allowed = y.next_allowed;
      if (ia->first != ib->first || !(x == y)) return false;
    }
    return true;
  };
  if (saved_ && same(*saved_, state)) return;
  if (Result<void> saved = store_->Save(state); !saved) {
    LogEvent(spdlog::level::err, "remediation state: cannot save",
             {{"path", store_->path()}, {"error", saved.error().message}});
    return;
  }
  saved_ = std::move(state);
}

void Remediator::Retain(const std::vector<std::string>& present) {
  for (auto it = devices_.begin(); it != devices_.end();) {
    if (std::find(present.begin(), present.end(), it->first) == present.end())
      it = devices_.erase(it);
    else
      ++it;
  }
}

RemediationState Remediator::StepInSync(const std::string& netdev, Clock::time_point now,
                                        DeviceStatus& status) {
  if (!status.in_sync_since) status.in_sync_since = now;
  if (status.gave_up) {
    LogEvent(spdlog::level::info, "remediation: in sync again, leaving the give-up state",
             {{"netdev", netdev}});
    status.gave_up = false;
    status.attempts = 0;
    status.next_allowed.reset();
  }
  // Attempts that held long enough were not undone: start counting anew.
  if (now - *status.in_sync_since >= options_.stable_reset) {
    status.attempts = 0;
    status.next_allowed.reset();
  }
  status.interrupted_apply = false;
  status.last_dry_run_plan.clear();
  Persist();
  return status.state = RemediationState::kInSync;
}

RemediationState Remediator::StepDryRun(const std::string& netdev,
                                        const std::vector<RemediationAction>& plan,
                                        std::vector<ActionRecord>* records, DeviceStatus& status) {
  // Log the plan when it changes, not at every poll.
  std::string text;
  for (const auto& a : plan) text += (text.empty() ? "" : "; ") + DescribeAction(a);
  if (text != status.last_dry_run_plan) {
    status.last_dry_run_plan = text;
    for (const auto& a : plan) {
      LogEvent(spdlog::level::info, "remediation dry-run: would write",
               {{"netdev", netdev},
                {"field", QosFieldName(a.field)},
                {"action", DescribeAction(a)},
                {"side_effect", a.side_effect}});
      ++status.counts[{a.field, std::string(kResultDryRun)}];
      if (records) records->push_back({a.field, DescribeAction(a), kResultDryRun, {}});
    }
  }
  return status.state = RemediationState::kDryRun;
}

RemediationState Remediator::Step(const DeviceContext& context, const QosPolicy& policy,
                                  const ObservedQos& observed, const DeviceDrift& drift,
                                  Clock::time_point now, const Reread& reread,
                                  std::vector<ActionRecord>* records,
                                  std::optional<ObservedQos>* after) {
  step_now_ = now;
  DeviceStatus& status = devices_[context.netdev];
  Restore(context.netdev, now, status);
  // Keyed on the device's resolved policy, not on reloads: reloading an unchanged file (or one
  // that changes only other devices' rules) must not hand a flapping device fresh attempts.
  if (std::string hash = PolicyFingerprint(policy); hash != status.policy_hash) {
    StartOver(context.netdev, hash, &status);
    Persist();
  }
  if (drift.InSync()) return StepInSync(context.netdev, now, status);
  status.in_sync_since.reset();

  // Given up stays given up (and visible) until the device is in sync or the policy changes.
  if (status.gave_up) return status.state = RemediationState::kGaveUp;
  std::vector<RemediationAction> plan = PlanRemediation(policy, observed, drift);
  if (plan.empty()) return status.state = RemediationState::kObserveOnly;
  if (auto blocked = CheckGuardrails(context)) return status.state = *blocked;
  if (options_.mode == RemediationMode::kDryRun)
    return StepDryRun(context.netdev, plan, records, status);
  if (options_.mode != RemediationMode::kEnforce)
    return status.state = RemediationState::kObserveOnly;
  return StepEnforce(context.netdev, policy, now, reread, records, after, status);
}

RemediationState Remediator::StepEnforce(const std::string& netdev, const QosPolicy& policy,
                                         Clock::time_point now, const Reread& reread,
                                         std::vector<ActionRecord>* records,
                                         std::optional<ObservedQos>* after, DeviceStatus& status) {
  if (status.next_allowed && now < *status.next_allowed)
    return status.state = RemediationState::kBackoff;
  if (status.attempts >= options_.max_attempts) {
    LogEvent(spdlog::level::err,
             "remediation: giving up, the writes did not hold (something keeps undoing the "
             "policy: DCBX from the switch, another agent, firmware?); leaving it to a human",
             {{"netdev", netdev}, {"attempts", status.attempts}});
    status.gave_up = true;
    Persist();
    return status.state = RemediationState::kGaveUp;
  }
  if (wrote_this_pass_ && pass_started_ && now_() - *pass_started_ >= options_.apply_budget)
    return status.state = RemediationState::kBackoff;  // the pass budget is spent: next pass

  // The writes are built from a read taken now, not from the observation that showed the drift
  // (up to a poll interval old): one read per plan.
  ObservedQos fresh = reread();
  DeviceDrift fresh_drift = EvaluateDrift(policy, fresh);
  if (after) *after = fresh;
  if (fresh_drift.InSync()) return StepInSync(netdev, now, status);
  std::vector<RemediationAction> plan = PlanRemediation(policy, fresh, fresh_drift);
  if (plan.empty()) return status.state = RemediationState::kObserveOnly;
  // The link guard again, on the fresh read: a link that went down after the inventory last saw
  // it (its notification can trail the DCB one that woke this pass) has no speed.
  if (fresh.link.speed_mbps.ok() && fresh.link.speed_mbps.value == 0)
    return status.state = RemediationState::kBlockedDown;

  ++status.attempts;
  status.attempt_times.push_back(now);
  if (status.attempt_times.size() > 16) status.attempt_times.erase(status.attempt_times.begin());
  auto wait = options_.base_backoff * (1LL << std::min(status.attempts - 1, 20));
  status.next_allowed = now + std::min<std::chrono::seconds>(wait, options_.max_backoff);
  // On disk before the first write: a kill from here on is seen by the next start.
  status.apply_in_progress = true;
  Persist();
  std::vector<Outcome> outcomes;
  const bool complete = Execute(netdev, plan, reread, outcomes);
  // Verify by reading back: a write the kernel accepted but that did not take (or was undone at
  // once) is a mismatch, not a success. The caller publishes this read.
  ObservedQos verified = reread();
  Verify(netdev, policy, outcomes, verified, records, status);
  if (after) *after = std::move(verified);
  if (!complete) {
    // Cut short by the budget, not by the device: the rest goes out next pass at no cost.
    --status.attempts;
    status.next_allowed.reset();
  }
  status.apply_in_progress = false;
  Persist();
  return status.state = RemediationState::kActed;
}

Result<void> Remediator::Send(const std::string& netdev, const RemediationAction& action,
                              const DcbWrite& dcb, const Reread& reread) {
  switch (action.kind) {
    case RemediationAction::Kind::kDcbSet:
      return writer_->SetDcb(netdev, dcb);
    case RemediationAction::Kind::kDcbDeleteApps:
      if (auto still = StillPresent(action.dcb.apps, reread()); !still.empty())
        return writer_->DeleteDcbApps(netdev, still);
      return {};
    case RemediationAction::Kind::kDcqcnEnable:
      return writer_->WriteDcqcn(netdev, action.np, action.prio, action.enable);
    case RemediationAction::Kind::kTcpEcn:
      tcp_ecn_written_this_pass_ = true;
      return writer_->WriteTcpEcn(action.value);
    case RemediationAction::Kind::kRoceTos:
      return writer_->WriteRoceTos(action.rdma_device, action.port, action.value);
    case RemediationAction::Kind::kDcqcnParam:
      return writer_->WriteDcqcnParam(netdev, action.np, action.param, action.param_value);
  }
  return {};
}

bool Remediator::Execute(const std::string& netdev, const std::vector<RemediationAction>& plan,
                         const Reread& reread, std::vector<Outcome>& outcomes) {
  outcomes.assign(plan.size(), Outcome{});
  for (size_t i = 0; i < plan.size(); ++i) outcomes[i].action = &plan[i];
  if (!pass_started_) pass_started_ = now_();
  bool failed = false, complete = true;
  for (const Batch& batch : Batches(plan)) {
    const RemediationAction& first = plan[batch.actions.front()];
    Outcome::Sent sent = Outcome::Sent::kWritten;
    std::string error;
    if (failed) {
      sent = Outcome::Sent::kSkipped;  // stop at the first failed write
    } else if (wrote_this_pass_ && now_() - *pass_started_ >= options_.apply_budget) {
      sent = Outcome::Sent::kDeferred;
      complete = false;
    } else if (first.kind == RemediationAction::Kind::kTcpEcn && tcp_ecn_written_this_pass_) {
      sent = Outcome::Sent::kNotNeeded;  // host-wide: one write per pass, already made
    } else {
      for (size_t i : batch.actions)
        if (!plan[i].side_effect.empty())
          LogEvent(spdlog::level::warn, "remediation: a write with a side effect",
                   {{"netdev", netdev},
                    {"field", QosFieldName(plan[i].field)},
                    {"action", DescribeAction(plan[i])},
                    {"side_effect", plan[i].side_effect}});
      Result<void> result = Send(netdev, first, batch.dcb, reread);
      wrote_this_pass_ = true;
      if (!result.ok()) {
        failed = true;
        sent = Outcome::Sent::kFailed;
        error = result.error().message;
      }
    }
    for (size_t i : batch.actions) {
      outcomes[i].sent = sent;
      outcomes[i].error = error;
    }
  }
  return complete;
}

void Remediator::Verify(const std::string& netdev, const QosPolicy& policy,
                        const std::vector<Outcome>& outcomes, const ObservedQos& after,
                        std::vector<ActionRecord>* records, DeviceStatus& status) {
  const DeviceDrift drift = EvaluateDrift(policy, after);
  for (const Outcome& o : outcomes) {
    // Neither tried nor failed: left for the next pass, or made by another device this pass.
    if (o.sent == Outcome::Sent::kDeferred || o.sent == Outcome::Sent::kNotNeeded) continue;
    const FieldVerdict* v = drift.Find(o.action->field);
    const bool holds = v != nullptr && v->status == FieldStatus::kInSync;
    std::string_view result = kResultSkipped;
    std::string error = o.error;
    switch (o.sent) {
      case Outcome::Sent::kWritten:
        result = holds ? kResultSuccess : kResultMismatch;
        if (!holds && v != nullptr) error = "read back: " + v->actual;
        break;
      case Outcome::Sent::kFailed:
        // A message with several DCB parts: the kernel applied those before the failing one.
        result = holds ? kResultSuccess : kResultFailed;
        if (holds) error = "applied before the kernel stopped at a later part: " + o.error;
        break;
      default:
        error = "not sent: an earlier write failed";
        break;
    }
    std::string description = DescribeAction(*o.action);
    if (result == kResultSuccess && error.empty())
      LogEvent(spdlog::level::info, "remediation enforce",
               {{"netdev", netdev},
                {"field", QosFieldName(o.action->field)},
                {"action", description},
                {"result", result}});
    else
      LogEvent(spdlog::level::warn, "remediation enforce",
               {{"netdev", netdev},
                {"field", QosFieldName(o.action->field)},
                {"action", description},
                {"result", result},
                {"error", error}});
    ++status.counts[{o.action->field, std::string(result)}];
    if (records) records->push_back({o.action->field, description, result, error});
  }
}

bool HasNetAdminCapability() {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_NET_ADMIN / 32].effective >> (CAP_NET_ADMIN % 32)) & 1u;
}

}  // namespace roceqos
