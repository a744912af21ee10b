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

Remediator::Remediator(RemediationOptions options, QosWriter* writer, RemediationStore* store,
                       Now now)
    : options_(options),
      store_(store),
      now_(now),
      apply_(writer, options.apply_budget, std::move(now)) {
  if (store_ != nullptr) LoadStore();
}

void Remediator::Suspend(const std::string& reason, const std::string& error) {
  if (!suspended_reason_.empty()) return;
  suspended_reason_ = reason;
  LogEvent(spdlog::level::err,
           "remediation: enforce suspended for the life of this process, observing only; fix the "
           "state file and restart",
           {{"reason", reason}, {"path", store_->path()}, {"error", error}});
}

void Remediator::LoadStore() {
  Result<PersistedState> loaded = store_->Load();
  if (!loaded) return Suspend("state_unreadable", loaded.error().message);
  // Records of devices gone for longer than ForgetAfter() are not worth keeping.
  const auto wall = std::chrono::system_clock::now();
  for (const auto& [identity, d] : *loaded)
    if (!d.last_seen || wall - *d.last_seen < options_.ForgetAfter()) restored_[identity] = d;
  for (const auto& [identity, d] : restored_)
    if (d.apply_in_progress)
      LogEvent(spdlog::level::warn,
               "remediation: the previous process ended in the middle of an apply; the device "
               "may be half-written: it is re-read and re-planned from what it shows now",
               {{"device", identity}, {"netdev", d.netdev}, {"attempt", d.attempts}});
  // Written back now: a directory that cannot take the file is found at start, not mid-apply.
  if (Result<void> saved = store_->Save(restored_); !saved)
    return Suspend("state_unwritable", saved.error().message);
  saved_ = restored_;
}

const Remediator::DeviceStatus* Remediator::Status(const std::string& identity) const {
  auto it = devices_.find(identity);
  return it == devices_.end() ? nullptr : &it->second;
}

void Remediator::BeginPass() { apply_.Begin(); }

void Remediator::StartOver(const DeviceContext& context, const std::string& policy_hash,
                           DeviceStatus* status) {
  if (!status->policy_hash.empty())
    LogEvent(spdlog::level::info,
             "remediation: the fields enforce writes changed, attempts and give-up start over",
             {{"netdev", context.netdev}, {"device", context.identity}});
  status->policy_hash = policy_hash;
  status->attempts = 0;
  status->next_allowed.reset();
  status->last_dry_run_plan.clear();
  status->gave_up = false;
}

void Remediator::Restore(const DeviceContext& context, Clock::time_point now,
                         DeviceStatus& status) {
  auto it = restored_.find(context.identity);
  // A version 1 file knew devices by netdev name only.
  if (it == restored_.end()) it = restored_.find("netdev:" + context.netdev);
  if (it == restored_.end()) return;
  const PersistedDevice& d = it->second;
  status.policy_hash = d.policy_hash;
  status.attempts = d.attempts;
  status.gave_up = d.gave_up;
  status.interrupted_apply = d.apply_in_progress;
  if (d.next_allowed) {
    // The file holds wall-clock time; the state machine runs on the monotonic clock. A wait
    // longer than any back-off (a clock step, a hand-edited file) is cut to the longest one.
    auto left = std::chrono::duration_cast<std::chrono::seconds>(*d.next_allowed -
                                                                 std::chrono::system_clock::now());
    left = std::clamp<std::chrono::seconds>(left, std::chrono::seconds(0), options_.max_backoff);
    status.next_allowed = now + left;
  }
  restored_.erase(it);
}

PersistedState Remediator::ToPersisted() const {
  PersistedState state = restored_;  // devices not seen yet keep their record
  const auto steady = step_now_;     // the clock next_allowed and last_seen were taken on
  const auto wall = std::chrono::system_clock::now();
  auto to_wall = [&](Clock::time_point t) {
    return wall + std::chrono::duration_cast<std::chrono::system_clock::duration>(t - steady);
  };
  for (const auto& [identity, st] : devices_) {
    if (st.policy_hash.empty()) continue;
    PersistedDevice& d = state[identity];
    d.netdev = st.netdev;
    d.policy_hash = st.policy_hash;
    d.attempts = st.attempts;
    d.gave_up = st.gave_up;
    d.apply_in_progress = st.apply_in_progress;
    d.last_seen = to_wall(st.last_seen);
    d.next_allowed.reset();
    if (st.next_allowed) d.next_allowed = to_wall(*st.next_allowed);
  }
  return state;
}

bool Remediator::Persist() {
  if (store_ == nullptr) return true;
  if (!suspended_reason_.empty()) return false;
  PersistedState state = ToPersisted();
  // Seconds-level jitter of the back-off alone is not worth a write.
  auto near = [](const auto& x, const auto& y) {
    return x && y && std::chrono::abs(*x - *y) < std::chrono::seconds(2);
  };
  auto same = [&near](const PersistedState& a, const PersistedState& b) {
    if (a.size() != b.size()) return false;
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      PersistedDevice x = ia->second, y = ib->second;
      if (near(x.next_allowed, y.next_allowed)) x.next_allowed = y.next_allowed;
      // last_seen only has to be right to within a fraction of ForgetAfter() (an hour at least).
      if (x.last_seen && y.last_seen &&
          std::chrono::abs(*x.last_seen - *y.last_seen) < std::chrono::minutes(10))
        x.last_seen = y.last_seen;
      if (ia->first != ib->first || !(x == y)) return false;
    }
    return true;
  };
  if (saved_ && same(*saved_, state)) return true;
  if (Result<void> saved = store_->Save(state); !saved) {
    Suspend("state_unwritable", saved.error().message);
    return false;
  }
  saved_ = std::move(state);
  return true;
}

void Remediator::Retain(const std::vector<std::string>& present,
                        std::optional<Clock::time_point> at) {
  const Clock::time_point now = at.value_or(step_now_);
  bool forgot = false;
  for (auto it = devices_.begin(); it != devices_.end();) {
    const bool here = std::find(present.begin(), present.end(), it->first) != present.end();
    if (!here && now - it->second.last_seen >= options_.ForgetAfter()) {
      it = devices_.erase(it);
      forgot = true;
    } else {
      ++it;
    }
  }
  if (!forgot) return;
  step_now_ = now;
  Persist();
}

RemediationState Remediator::StepInSync(const std::string& netdev, const DeviceDrift& drift,
                                        Clock::time_point now, DeviceStatus& status) {
  // Only a device that reads every written field, in sync, for the whole period proves the
  // writes held: a source absent during a driver reload proves nothing.
  if (!FullyInSync(drift)) {
    status.fully_in_sync_since.reset();
  } else if (!status.fully_in_sync_since) {
    status.fully_in_sync_since = now;
  } else if (now - *status.fully_in_sync_since >= options_.stable_reset &&
             (status.attempts > 0 || status.gave_up)) {
    if (status.gave_up)
      LogEvent(spdlog::level::info, "remediation: in sync long enough, leaving the give-up state",
               {{"netdev", netdev}});
    status.gave_up = false;
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
  DeviceStatus& status = devices_[context.identity];
  status.netdev = context.netdev;
  status.last_seen = now;
  Restore(context, now, status);
  // The policy in hand is a fallback, not the device's: its fingerprint must not reset the
  // device's give-up, and nothing is written for it.
  if (!context.policy_resolved) return status.state = RemediationState::kBlockedPolicyUnresolved;
  // Keyed on the fields enforce writes, not on reloads: reloading an unchanged file (or one
  // that changes only other devices' rules or observe-only fields) hands out no fresh attempts.
  if (std::string hash = WrittenFieldsFingerprint(policy); hash != status.policy_hash) {
    StartOver(context, hash, &status);
    Persist();
  }
  if (drift.InSync()) return StepInSync(context.netdev, drift, now, status);
  return StepDrifted(context, policy, observed, drift, now, reread, records, after, status);
}

RemediationState Remediator::StepDrifted(const DeviceContext& context, const QosPolicy& policy,
                                         const ObservedQos& observed, const DeviceDrift& drift,
                                         Clock::time_point now, const Reread& reread,
                                         std::vector<ActionRecord>* records,
                                         std::optional<ObservedQos>* after, DeviceStatus& status) {
  status.fully_in_sync_since.reset();
  // Given up stays given up (and visible) until proven stable or the written fields change.
  if (status.gave_up) return status.state = RemediationState::kGaveUp;
  std::vector<RemediationAction> plan = PlanRemediation(policy, observed, drift);
  if (plan.empty()) return status.state = RemediationState::kObserveOnly;
  if (auto blocked = CheckGuardrails(context)) return status.state = *blocked;
  if (options_.mode == RemediationMode::kDryRun)
    return StepDryRun(context.netdev, plan, records, status);
  if (options_.mode != RemediationMode::kEnforce)
    return status.state = RemediationState::kObserveOnly;
  if (!suspended_reason_.empty()) return status.state = RemediationState::kBlockedStateUnavailable;
  return StepEnforce(context.netdev, policy, now, reread, records, after, status);
}

RemediationState Remediator::GiveUp(const std::string& netdev, DeviceStatus& status) {
  LogEvent(spdlog::level::err,
           "remediation: giving up, the writes did not hold (something keeps undoing the "
           "policy: DCBX from the switch, another agent, firmware?); leaving it to a human",
           {{"netdev", netdev}, {"attempts", status.attempts}});
  status.gave_up = true;
  Persist();
  return status.state = RemediationState::kGaveUp;
}

bool Remediator::BeginAttempt(const std::string& netdev, Clock::time_point now,
                              DeviceStatus& status) {
  ++status.attempts;
  status.attempt_times.push_back(now);
  if (status.attempt_times.size() > 16) status.attempt_times.erase(status.attempt_times.begin());
  auto wait = options_.base_backoff * (1LL << std::min(status.attempts - 1, 20));
  status.next_allowed = now + std::min<std::chrono::seconds>(wait, options_.max_backoff);
  // On disk before the first write: a kill from here on is seen by the next start.
  status.apply_in_progress = true;
  if (Persist()) return true;
  LogEvent(spdlog::level::err, "remediation: not writing, the attempt could not be recorded",
           {{"netdev", netdev}});
  status.apply_in_progress = false;
  return false;
}

RemediationState Remediator::StepEnforce(const std::string& netdev, const QosPolicy& policy,
                                         Clock::time_point now, const Reread& reread,
                                         std::vector<ActionRecord>* records,
                                         std::optional<ObservedQos>* after, DeviceStatus& status) {
  if (status.next_allowed && now < *status.next_allowed)
    return status.state = RemediationState::kBackoff;
  if (status.attempts >= options_.max_attempts) return GiveUp(netdev, status);
  if (apply_.BudgetSpent()) return status.state = RemediationState::kBackoff;  // next pass

  // The writes are built from a read taken now, not from the observation that showed the drift
  // (up to a poll interval old): one read per plan.
  ObservedQos fresh = reread();
  DeviceDrift fresh_drift = EvaluateDrift(policy, fresh);
  if (after) *after = fresh;
  if (fresh_drift.InSync()) return StepInSync(netdev, fresh_drift, now, status);
  std::vector<RemediationAction> plan = PlanRemediation(policy, fresh, fresh_drift);
  if (plan.empty()) return status.state = RemediationState::kObserveOnly;
  // The link guard again, on the fresh read: a link that went down after the inventory last saw
  // it (its notification can trail the DCB one that woke this pass) has no speed.
  if (fresh.link.speed_mbps.ok() && fresh.link.speed_mbps.value == 0)
    return status.state = RemediationState::kBlockedDown;

  if (!BeginAttempt(netdev, now, status))
    return status.state = RemediationState::kBlockedStateUnavailable;
  std::vector<ActionOutcome> outcomes = apply_.Execute(netdev, plan, reread);
  // Verify by reading back: a write the kernel accepted but that did not take (or was undone at
  // once) is a mismatch, not a success. The caller publishes this read.
  ObservedQos verified = reread();
  RecordOutcomes(netdev, policy, outcomes, verified, records, status.counts);
  if (after) *after = std::move(verified);
  if (!AnyWriteReachedDevice(outcomes)) {
    // The budget stopped it before its first write: the device saw nothing, nothing to count.
    --status.attempts;
    status.next_allowed.reset();
  }
  status.apply_in_progress = false;
  Persist();
  return status.state = RemediationState::kActed;
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
