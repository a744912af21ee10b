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
#include "exporter/qos/policy.h"
#include "exporter/qos/remediate_apply.h"
#include "exporter/qos/remediate_plan.h"
#include "exporter/qos/remediate_store.h"

namespace roceqos {

Result<RemediationMode> ParseRemediationMode(std::string_view text);  // off|dry-run|enforce
std::string_view RemediationModeName(RemediationMode mode);

/// What the storm state machine can say about a device. Only kClear lets a write through: right
/// after a start there is no history, and a device without pause-duration counters can never say
/// "no storm" from its ratio (docs/remediation.md "No write during a storm").
enum class StormGuard : uint8_t {
  kClear,    // enough history, no storm on, none suspected (or no pause counter moved)
  kStorm,    // a storm is on (or a detection run is under way)
  kUnknown,  // not enough history yet, or no pause-duration counters while pause counters move
};

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

  /// How long a device that vanished keeps its attempts, back-off and give-up: at least an hour
  /// and at least the longest back-off, so a NIC in a reset loop or a driver reload comes back
  /// to the state it left.
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

  struct DeviceStatus {
    std::string netdev;  // the name it had at its last Step
    RemediationState state = RemediationState::kInSync;
    int attempts = 0;  // since the last stable in-sync period
    /// Latched when max_attempts did not hold; ends only after FullyInSync() for stable_reset,
    /// or with a change of the written fields. While latched a drift is never written.
    bool gave_up = false;
    std::optional<Clock::time_point> next_allowed;
    std::optional<Clock::time_point> fully_in_sync_since;
    Clock::time_point last_seen{};
    std::vector<Clock::time_point> attempt_times;  // for tests and the log (last 16 kept)
    ActionCounts counts;                           // (field, result) -> n
    std::string last_dry_run_plan;
    /// WrittenFieldsFingerprint of the effective policy the attempts were made for.
    std::string policy_hash;
    bool apply_in_progress = false;  // between the first write and the verification read
    /// The state file said an apply was under way when the previous process ended: the device
    /// may be half-written. Cleared once the device reads in sync.
    bool interrupted_apply = false;
  };

  /// `store` (may be null) keeps attempts, back-off, give-up and applies in progress across
  /// restarts; it is loaded here and written back at once. A file that cannot be read or written
  /// suspends enforce for the life of the process (suspended_reason()): without its history the
  /// max-attempts promise cannot be kept. `now` measures the apply budget and the forgetting of
  /// vanished devices (tests inject a clock).
  Remediator(RemediationOptions options, QosWriter* writer, RemediationStore* store = nullptr,
             Now now = &Clock::now);

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
  /// Why enforce observes for the rest of this process (the state file), or empty.
  const std::string& suspended_reason() const { return suspended_reason_; }

 private:
  /// A new target for one device: its give-up state and back-off start over.
  static void StartOver(const DeviceContext& context, const std::string& policy_hash,
                        DeviceStatus* status);
  RemediationState StepInSync(const std::string& netdev, const DeviceDrift& drift,
                              Clock::time_point now, DeviceStatus& status);
  RemediationState StepDrifted(const DeviceContext& context, const QosPolicy& policy,
                               const ObservedQos& observed, const DeviceDrift& drift,
                               Clock::time_point now, const Reread& reread,
                               std::vector<ActionRecord>* records,
                               std::optional<ObservedQos>* after, DeviceStatus& status);
  RemediationState StepDryRun(const std::string& netdev, const std::vector<RemediationAction>& plan,
                              std::vector<ActionRecord>* records, DeviceStatus& status);
  RemediationState StepEnforce(const std::string& netdev, const QosPolicy& policy,
                               Clock::time_point now, const Reread& reread,
                               std::vector<ActionRecord>* records,
                               std::optional<ObservedQos>* after, DeviceStatus& status);
  /// Counts the attempt and arms the back-off; false (nothing written) when the state file
  /// cannot record it first.
  bool BeginAttempt(const std::string& netdev, Clock::time_point now, DeviceStatus& status);
  RemediationState GiveUp(const std::string& netdev, DeviceStatus& status);
  void Restore(const DeviceContext& context, Clock::time_point now, DeviceStatus& status);
  void LoadStore();
  PersistedState ToPersisted() const;
  /// Writes the state file when it changed. False when it could not be written: enforce is
  /// suspended from then on.
  bool Persist();
  void Suspend(const std::string& reason, const std::string& error);

  RemediationOptions options_;
  RemediationStore* store_;
  Now now_;
  ApplyPass apply_;
  std::map<std::string, DeviceStatus> devices_;  // identity ->
  PersistedState restored_;                      // loaded at start, not yet claimed by a Step
  std::optional<PersistedState> saved_;          // what the file holds, to write only changes
  Clock::time_point step_now_{};                 // `now` of the running Step
  std::string suspended_reason_;
};

/// True when the process has CAP_NET_ADMIN in its effective set (capget(2)); enforce mode
/// refuses to start without it.
bool HasNetAdminCapability();

}  // namespace roceqos
