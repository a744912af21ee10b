#include "exporter/qos/remediate.h"

#include <fmt/format.h>
#include <linux/capability.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "base/enum_names.h"
#include "base/log_event.h"

namespace roceqos {
namespace {

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
    {RemediationState::kBlockedIdentityChanged, "blocked_identity_changed"},
    {RemediationState::kBlockedLockLost, "blocked_lock_lost"},
};

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

RemediationState RefusalState(GateRefusal refusal) {
  switch (refusal) {
    case GateRefusal::kDeviceGone:
    case GateRefusal::kIdentityMoved:
      return RemediationState::kBlockedIdentityChanged;
    case GateRefusal::kStorm:
      return RemediationState::kBlockedStorm;
    case GateRefusal::kStormUnknown:
    case GateRefusal::kStormStale:
      return RemediationState::kBlockedUnknownStorm;
    case GateRefusal::kLockLost:
      return RemediationState::kBlockedLockLost;
    case GateRefusal::kLedgerBackoff:
    case GateRefusal::kNone:  // nothing admitted, nothing refused: the pass budget deferred it
      return RemediationState::kBackoff;
    case GateRefusal::kLedgerExhausted:
    case GateRefusal::kLedgerGaveUp:
      return RemediationState::kGaveUp;
    case GateRefusal::kNoAttempt:
    case GateRefusal::kLedgerNotDurable:
      break;
  }
  return RemediationState::kBlockedStateUnavailable;
}

namespace {

LedgerOptions LedgerOptionsOf(const RemediationOptions& options) {
  return {.max_attempts = options.max_attempts,
          .base_backoff = options.base_backoff,
          .max_backoff = options.max_backoff,
          .forget_after = options.ForgetAfter()};
}

bool HostWide(const RemediationAction& action) {
  return action.kind == RemediationAction::Kind::kTcpEcn;
}

}  // namespace

Remediator::Remediator(RemediationOptions options, QosWriter* writer, WriteFacts facts,
                       LedgerStore* store, Now now)
    : options_(std::move(options)),
      now_(std::move(now)),
      step_now_(now_()),
      step_started_(step_now_),
      // Back-offs run from the Step's time; the gate's facts are taken on StepClock().
      ledger_(LedgerOptionsOf(options_), store,
              options_.boot_id.empty() ? CurrentBootId() : options_.boot_id,
              [this] { return step_now_; }),
      gate_(
          &ledger_, facts, options_.storm_evidence_max_age, [this] { return StepClock(); },
          options_.seams),
      gated_writer_(writer, &gate_),
      apply_(&gated_writer_, options_.apply_budget, now_) {
  ledger_.Load(step_now_);
}

std::string Remediator::suspended_reason() const {
  if (!ledger_.suspended_reason().empty()) return ledger_.suspended_reason();
  return gate_.lock_lost() ? "lock_lost" : "";
}

const Remediator::DeviceStatus* Remediator::Status(const std::string& identity) const {
  auto it = devices_.find(identity);
  return it == devices_.end() ? nullptr : &it->second;
}

void Remediator::BeginPass() { apply_.Begin(); }

void Remediator::ShowLedger(const std::string& identity, DeviceStatus& status) const {
  const Ledger::Entry& e = ledger_.Get(identity);
  status.attempts = e.attempts;
  status.gave_up = e.gave_up;
  status.apply_in_progress = e.apply_in_progress;
  status.next_allowed.reset();
  if (e.next_allowed) status.next_allowed = Clock::time_point(*e.next_allowed);
}

void Remediator::Retain(const std::vector<std::string>& present,
                        std::optional<Clock::time_point> at) {
  const Clock::time_point now = at.value_or(step_now_);
  ledger_.Retain(present, now);
  std::erase_if(devices_, [&](const auto& entry) {
    const bool here = std::find(present.begin(), present.end(), entry.first) != present.end();
    return !here && now - entry.second.last_seen >= options_.ForgetAfter();
  });
}

RemediationState Remediator::StepInSync(const std::string& identity, const DeviceDrift& drift,
                                        Clock::time_point now, DeviceStatus& status) {
  // Only a device that reads every written field, in sync, for the whole period proves the
  // writes held: a source absent during a driver reload proves nothing.
  if (!FullyInSync(drift)) {
    status.fully_in_sync_since.reset();
  } else if (!status.fully_in_sync_since) {
    status.fully_in_sync_since = now;
  } else if (now - *status.fully_in_sync_since >= options_.stable_reset &&
             (ledger_.Get(identity).attempts > 0 || ledger_.Get(identity).gave_up)) {
    if (ledger_.Get(identity).gave_up)
      LogEvent(spdlog::level::info, "remediation: in sync long enough, leaving the give-up state",
               {{"netdev", status.netdev}});
    ledger_.Reset(identity);
    // tcp_ecn read in sync with the rest: the host's entry has proven stable too.
    const bool checks_tcp_ecn =
        std::any_of(drift.fields.begin(), drift.fields.end(),
                    [](const auto& v) { return v.field == QosField::kTcpEcn; });
    if (checks_tcp_ecn) ledger_.Reset(std::string(kHostIdentity));
  }
  status.interrupted_apply = false;
  status.last_dry_run_plan.clear();
  ShowLedger(identity, status);
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
  step_started_ = now_();
  const bool first_step = !devices_.contains(context.identity);
  DeviceStatus& status = devices_[context.identity];
  status.netdev = context.netdev;
  status.last_seen = now;
  if (first_step) {
    ledger_.Rekey("netdev:" + context.netdev, context.identity);
    status.interrupted_apply = ledger_.Interrupted(context.identity);
  }
  ledger_.Seen(context.identity, context.netdev, now);
  ShowLedger(context.identity, status);
  // The policy in hand is a fallback, not the device's: nothing is written for it.
  if (!context.policy_resolved) return status.state = RemediationState::kBlockedPolicyUnresolved;
  if (drift.InSync()) return StepInSync(context.identity, drift, now, status);
  return StepDrifted(context, policy, observed, drift, now, reread, records, after, status);
}

RemediationState Remediator::StepDrifted(const DeviceContext& context, const QosPolicy& policy,
                                         const ObservedQos& observed, const DeviceDrift& drift,
                                         Clock::time_point now, const Reread& reread,
                                         std::vector<ActionRecord>* records,
                                         std::optional<ObservedQos>* after, DeviceStatus& status) {
  status.fully_in_sync_since.reset();
  // Given up stays given up (and visible) until proven stable.
  if (status.gave_up && !options_.seams.skip_ledger)
    return status.state = RemediationState::kGaveUp;
  std::vector<RemediationAction> plan = PlanRemediation(policy, observed, drift);
  if (plan.empty()) return status.state = RemediationState::kObserveOnly;
  // A posted pass's storm verdict is as old as the pass, and an idle port's is `unknown` between
  // its reads: only a storm seen then stops the step here. Enforce's gate takes fresh evidence at
  // the write; dry-run shows what enforce would plan.
  DeviceContext guarded = context;
  if (guarded.storm == StormGuard::kUnknown) guarded.storm = StormGuard::kClear;
  if (auto blocked = CheckGuardrails(guarded)) return status.state = *blocked;
  if (options_.mode == RemediationMode::kDryRun)
    return StepDryRun(context.netdev, plan, records, status);
  if (options_.mode != RemediationMode::kEnforce)
    return status.state = RemediationState::kObserveOnly;
  if (gate_.lock_lost()) return status.state = RemediationState::kBlockedLockLost;
  if (!ledger_.suspended_reason().empty())
    return status.state = RemediationState::kBlockedStateUnavailable;
  return StepEnforce(context, policy, now, reread, records, after, status);
}

RemediationState Remediator::GiveUp(const std::string& identity, const std::string& netdev) {
  if (!ledger_.Get(identity).gave_up)
    LogEvent(
        spdlog::level::err,
        "remediation: giving up, the writes did not hold (something keeps undoing the "
        "policy: DCBX from the switch, another agent, firmware?); leaving it to a human",
        {{"netdev", netdev}, {"attempts", ledger_.Get(identity).attempts}, {"device", identity}});
  ledger_.GiveUp(identity);
  return RemediationState::kGaveUp;
}

std::optional<RemediationState> Remediator::LedgerBlocks(const std::string& identity,
                                                         const std::string& netdev,
                                                         Clock::time_point now) {
  if (options_.seams.skip_ledger) return std::nullopt;  // the simulation's self-test
  switch (ledger_.Check(identity, now)) {
    case Ledger::Verdict::kAllowed:
      return std::nullopt;
    case Ledger::Verdict::kBackoff:
      return RemediationState::kBackoff;
    case Ledger::Verdict::kExhausted:
    case Ledger::Verdict::kGaveUp:
      return GiveUp(identity, netdev);
    case Ledger::Verdict::kUnavailable:
      break;
  }
  return RemediationState::kBlockedStateUnavailable;
}

std::optional<RemediationState> Remediator::DropHostWrites(std::vector<RemediationAction>& plan,
                                                           Clock::time_point now) {
  if (std::none_of(plan.begin(), plan.end(), HostWide)) return std::nullopt;
  // tcp_ecn is one value for the whole host: its attempts are the host's, not each device's.
  std::optional<RemediationState> blocked = LedgerBlocks(std::string(kHostIdentity), "", now);
  if (blocked) std::erase_if(plan, HostWide);
  return blocked;
}

RemediationState Remediator::StepEnforce(const DeviceContext& context, const QosPolicy& policy,
                                         Clock::time_point now, const Reread& reread,
                                         std::vector<ActionRecord>* records,
                                         std::optional<ObservedQos>* after, DeviceStatus& status) {
  if (auto blocked = LedgerBlocks(context.identity, context.netdev, now)) {
    ShowLedger(context.identity, status);
    return status.state = *blocked;
  }
  if (apply_.BudgetSpent()) return status.state = RemediationState::kBackoff;  // next pass

  // The writes are built from a read taken now, not from the observation that showed the drift
  // (up to a poll interval old): one read per plan.
  ObservedQos fresh = reread();
  DeviceDrift fresh_drift = EvaluateDrift(policy, fresh);
  if (after) *after = fresh;
  if (fresh_drift.InSync()) return StepInSync(context.identity, fresh_drift, now, status);
  std::vector<RemediationAction> plan = PlanRemediation(policy, fresh, fresh_drift);
  if (plan.empty()) return status.state = RemediationState::kObserveOnly;
  const std::optional<RemediationState> host_blocked = DropHostWrites(plan, now);
  if (plan.empty()) return status.state = *host_blocked;  // only tcp_ecn, which waits
  // The link guard again, on the fresh read: a link that went down after the inventory last saw
  // it (its notification can trail the DCB one that woke this pass) has no speed.
  if (fresh.link.speed_mbps.ok() && fresh.link.speed_mbps.value == 0)
    return status.state = RemediationState::kBlockedDown;
  return Apply(context, policy, plan, now, reread, records, after, status);
}

RemediationState Remediator::Apply(const DeviceContext& context, const QosPolicy& policy,
                                   const std::vector<RemediationAction>& plan,
                                   Clock::time_point now, const Reread& reread,
                                   std::vector<ActionRecord>* records,
                                   std::optional<ObservedQos>* after, DeviceStatus& status) {
  gate_.Open({context.identity, context.netdev, context.rdma_devices});
  std::vector<ActionOutcome> outcomes = apply_.Execute(context.netdev, plan, reread);
  const GateRefusal refusal = gate_.last_refusal();
  if (!gate_.recorded()) {
    // Nothing was admitted: the device saw nothing, and nothing is counted.
    gate_.Close();
    ShowLedger(context.identity, status);
    return status.state = RefusalState(refusal);
  }
  // Verify by reading back: a write the kernel accepted but that did not take (or was undone at
  // once) is a mismatch, not a success. The caller publishes this read.
  ObservedQos verified = reread();
  gate_.Close();
  status.attempt_times.push_back(now);
  if (status.attempt_times.size() > 16) status.attempt_times.erase(status.attempt_times.begin());
  RecordOutcomes(context.netdev, policy, outcomes, verified, records, status.counts);
  if (after) *after = std::move(verified);
  ShowLedger(context.identity, status);
  return status.state =
             refusal == GateRefusal::kNone ? RemediationState::kActed : RefusalState(refusal);
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
