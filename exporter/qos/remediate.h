#pragma once

// Remediation (off by default): puts a drifted device back to its policy through the kernel
// interfaces `dcb`/`mlnx_qos` use, guarded so it is safe to leave on in a fleet. This header is
// the state machine (attempts, back-off, give-up, the guards); planning is remediate_plan.h, the
// writes remediate_apply.h, the state that survives a restart remediate_store.h. Decisions are
// made from plain values (DeviceContext, ObservedQos, DeviceDrift) so tests need no kernel.
// Reference: docs/remediation.md.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/device.h"
#include "exporter/core/qos_state.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/ledger.h"
#include "exporter/qos/policy.h"
#include "exporter/qos/remediate_apply.h"
#include "exporter/qos/remediate_plan.h"
#include "exporter/qos/remediate_store.h"
#include "exporter/qos/write_gate.h"

namespace roceqos {

Result<RemediationMode> ParseRemediationMode(std::string_view text);  // off|dry-run|enforce
std::string_view RemediationModeName(RemediationMode mode);

/// What the guardrails look at, gathered by the caller from discovery, the filesystem and the
/// storm state machine.
struct DeviceContext {
  std::string netdev;
  /// Keys the remediation state across renames, driver reloads and restarts: "pci:<address>"
  /// when the netdev is a PCI function, else "netdev:<name>" (DeviceIdentity).
  std::string identity;
  DeviceRole role = DeviceRole::kOther;
  bool oper_up = false;
  std::vector<std::string> rdma_devices;  // RDMA devices bound to the netdev
  bool driver_ready = true;  // /run/mellanox/drivers/.driver-ready present, or no such directory
  StormGuard storm = StormGuard::kUnknown;
  /// False when a policy rule's match could not be evaluated (it names an RDMA device and the
  /// RDMA ports are unknown): the effective policy is not known, so nothing is written.
  bool policy_resolved = true;
};

/// The stable identity of a netdev for DeviceContext::identity.
std::string DeviceIdentity(const Device& device);

std::string_view RemediationStateName(RemediationState state);

/// The guardrail verdict alone: a blocked state, or nullopt when writes are allowed.
std::optional<RemediationState> CheckGuardrails(const DeviceContext& context);

struct RemediationOptions {
  RemediationMode mode = RemediationMode::kOff;
  std::chrono::seconds base_backoff{30};  // wait after the first attempt; doubles per attempt
  std::chrono::seconds max_backoff{600};  // cap of the wait
  int max_attempts = 5;                   // attempts before giving up
  /// Fully in sync this long: attempts start from zero again, and a give-up ends.
  std::chrono::seconds stable_reset{3600};
  /// Writes of one pass stop once this much time went into them (the write under way finishes,
  /// one netlink or sysfs write at most); the rest waits for the next pass. An attempt that
  /// wrote anything counts in full. docs/remediation.md "Watchdog" derives the bound.
  std::chrono::milliseconds apply_budget{3000};

  /// The write gate's storm evidence must come from a read at most this old (one sampler period).
  std::chrono::nanoseconds storm_evidence_max_age = std::chrono::seconds(1);
  /// This boot's ID for the ledger's monotonic times; empty: CurrentBootId().
  std::string boot_id;
  /// Tests only: the enforce simulation's self-test removes one guard of the gate at a time.
  GateSeams seams;

  /// How long a device that vanished keeps its attempts, back-off and give-up (measured on the
  /// monotonic clock, from the last pass that saw it): at least an hour and at least the longest
  /// back-off, so a NIC in a reset loop or a driver reload comes back to the state it left.
  std::chrono::seconds ForgetAfter() const {
    return std::max<std::chrono::seconds>(max_backoff, std::chrono::hours(1));
  }
};

/// Per-device remediation state machine: rate limit with exponential back-off, give-up after
/// max_attempts, audit log and counters. Keyed by DeviceContext::identity. Not thread-safe: one
/// thread owns it.
class Remediator {
 public:
  using Clock = std::chrono::steady_clock;
  using Reread = QosReread;
  using Now = std::function<Clock::time_point()>;

  /// What the last Step showed of one device; attempts, back-off and give-up are the ledger's
  /// (copied here after each Step).
  struct DeviceStatus {
    std::string netdev;  // the name it had at its last Step
    RemediationState state = RemediationState::kInSync;
    int attempts = 0;  // since the last stable in-sync period
    /// Latched when max_attempts did not hold; ends only after FullyInSync() for stable_reset.
    /// While latched a drift is never written.
    bool gave_up = false;
    std::optional<Clock::time_point> next_allowed;
    std::optional<Clock::time_point> fully_in_sync_since;
    Clock::time_point last_seen{};
    std::vector<Clock::time_point> attempt_times;  // for tests and the log (last 16 kept)
    ActionCounts counts;                           // (field, result) -> n
    std::string last_dry_run_plan;
    bool apply_in_progress = false;  // between the first admitted write and the verification read
    /// The state file said an apply was under way when the previous process ended: the device
    /// may be half-written. Cleared once the device reads in sync.
    bool interrupted_apply = false;
  };

  /// Every write goes through the write gate, which takes its facts from `facts` at the moment of
  /// the write. `store` (may be null) keeps the ledger across restarts; it is loaded here and
  /// written back at once. A file that cannot be read or written suspends enforce for the life of
  /// the process (suspended_reason()): without its history the max-attempts promise cannot be
  /// kept. `now` is the ledger's and the gate's clock (tests inject one).
  Remediator(RemediationOptions options, QosWriter* writer, WriteFacts facts,
             LedgerStore* store = nullptr, Now now = &Clock::now);

  /// Starts a sampler pass: the apply budget and the once-per-pass tcp_ecn write start over.
  void BeginPass();

  /// One decision for one device, at the time the drift was evaluated. Returns the state and
  /// the actions taken (or planned, in dry-run). When enforce read the device (before planning
  /// and after writing), `after` receives the last read: the caller publishes it, no re-read.
  RemediationState Step(const DeviceContext& context, const QosPolicy& policy,
                        const ObservedQos& observed, const DeviceDrift& drift,
                        Clock::time_point now, const Reread& reread,
                        std::vector<ActionRecord>* records = nullptr,
                        std::optional<ObservedQos>* after = nullptr);

  /// By DeviceContext::identity.
  const DeviceStatus* Status(const std::string& identity) const;
  /// Devices (identities) absent from `present` are kept for RemediationOptions::ForgetAfter()
  /// after they were last seen, in memory and in the state file, then dropped. `now` is on the
  /// clock of Step's times (default: the last Step's).
  void Retain(const std::vector<std::string>& present,
              std::optional<Clock::time_point> now = std::nullopt);
  RemediationMode mode() const { return options_.mode; }
  /// Why enforce observes for the rest of this process (the state file, the lock), or empty.
  std::string suspended_reason() const;
  const Ledger& ledger() const { return ledger_; }

 private:
  RemediationState StepInSync(const std::string& identity, const DeviceDrift& drift,
                              Clock::time_point now, DeviceStatus& status);
  RemediationState StepDrifted(const DeviceContext& context, const QosPolicy& policy,
                               const ObservedQos& observed, const DeviceDrift& drift,
                               Clock::time_point now, const Reread& reread,
                               std::vector<ActionRecord>* records,
                               std::optional<ObservedQos>* after, DeviceStatus& status);
  RemediationState StepDryRun(const std::string& netdev, const std::vector<RemediationAction>& plan,
                              std::vector<ActionRecord>* records, DeviceStatus& status);
  RemediationState StepEnforce(const DeviceContext& context, const QosPolicy& policy,
                               Clock::time_point now, const Reread& reread,
                               std::vector<ActionRecord>* records,
                               std::optional<ObservedQos>* after, DeviceStatus& status);
  /// Writes the plan through the gate and verifies it by a read.
  RemediationState Apply(const DeviceContext& context, const QosPolicy& policy,
                         const std::vector<RemediationAction>& plan, Clock::time_point now,
                         const Reread& reread, std::vector<ActionRecord>* records,
                         std::optional<ObservedQos>* after, DeviceStatus& status);
  /// The ledger's verdict on a new attempt, as the state shown; nullopt when allowed.
  std::optional<RemediationState> LedgerBlocks(const std::string& identity,
                                               const std::string& netdev, Clock::time_point now);
  /// Removes host-wide writes (tcp_ecn) the host's ledger entry does not allow now, and says why.
  std::optional<RemediationState> DropHostWrites(std::vector<RemediationAction>& plan,
                                                 Clock::time_point now);
  RemediationState GiveUp(const std::string& identity, const std::string& netdev);
  /// Copies the ledger's view of the identity into its status.
  void ShowLedger(const std::string& identity, DeviceStatus& status) const;
  /// The ledger's and the gate's clock: the running Step's `now` plus the time `now_` says has
  /// passed since that Step began (the worker steps at the current time, so this is `now_`).
  Clock::time_point StepClock() const { return step_now_ + (now_() - step_started_); }

  RemediationOptions options_;
  Now now_;
  Clock::time_point step_now_{};      // `now` of the running Step
  Clock::time_point step_started_{};  // now_() when it began
  Ledger ledger_;
  WriteGate gate_;
  GatedWriter gated_writer_;
  ApplyPass apply_;
  std::map<std::string, DeviceStatus> devices_;  // identity ->
};

/// The state a device shows when the gate refused its attempt.
RemediationState RefusalState(GateRefusal refusal);

/// True when the process has CAP_NET_ADMIN in its effective set (capget(2)); enforce mode
/// refuses to start without it.
bool HasNetAdminCapability();

}  // namespace roceqos
