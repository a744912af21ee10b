#pragma once

// Remediation (off by default): puts a drifted device back to its policy through the kernel
// interfaces `dcb`/`mlnx_qos` use, guarded so it is safe to leave on in a fleet. Decisions are
// made from plain values (DeviceContext, ObservedQos, DeviceDrift) so tests need no kernel.
// Reference: docs/policy.md "Remediation".

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/dcb.h"
#include "collectors/device.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/policy.h"
#include "exporter/qos/remediate_store.h"

namespace roceqos {

enum class RemediationMode : uint8_t { kOff, kDryRun, kEnforce };
Result<RemediationMode> ParseRemediationMode(std::string_view text);  // off|dry-run|enforce
std::string_view RemediationModeName(RemediationMode mode);
inline constexpr RemediationMode kAllRemediationModes[] = {
    RemediationMode::kOff, RemediationMode::kDryRun, RemediationMode::kEnforce};

/// One write. DCB writes go through RTM_SETDCB; the rest are sysfs/procfs writes.
struct RemediationAction {
  enum class Kind : uint8_t {
    kDcbSet,
    kDcbDeleteApps,
    kDcqcnEnable,
    kTcpEcn,
    kRoceTos,
    kDcqcnParam,  // one ecn/roce_{np,rp}/<param> file (CNP marking, DCQCN parameters)
  };
  QosField field = QosField::kPfc;
  Kind kind = Kind::kDcbSet;
  DcbWrite dcb;     // kDcbSet: the parts to set; kDcbDeleteApps: dcb.apps to delete
  bool np = false;  // kDcqcnEnable: notification (true) or reaction point
  int prio = 0;     // kDcqcnEnable
  bool enable = false;
  int value = 0;             // kTcpEcn, kRoceTos
  std::string rdma_device;   // kRoceTos
  uint32_t port = 0;         // kRoceTos
  std::string param;         // kDcqcnParam: file name under ecn/roce_np (np) or ecn/roce_rp
  uint64_t param_value = 0;  // kDcqcnParam
  std::string old_value;     // for the audit log
  std::string new_value;
  std::string side_effect;  // disruption the write causes, logged before it is made
};

/// The writes that bring `observed` to `policy` for the drifted fields, in execution order:
/// ETS (prio_tc/ets), PFC, buffer, new DSCP APP entries, then the deletion of entries they
/// replace (add before delete, as `dcb app replace` does), then DCQCN (enables, CNP marking,
/// parameters), ToS and tcp_ecn. Fields that are absent, unreadable, or not Remediable() get no
/// action.
std::vector<RemediationAction> PlanRemediation(const QosPolicy& policy, const ObservedQos& observed,
                                               const DeviceDrift& drift);

/// Whether PlanRemediation can ever write this field. The MTU and the link facts (speed, VF
/// count) are observe only: changing them takes the link or the VFs down under running jobs.
bool Remediable(QosField field);

/// "<field>: <old> -> <new>" for logs and dry-run.
std::string DescribeAction(const RemediationAction& action);

/// Where the writes go. The kernel implementation wraps DcbClient and HostReader.
class QosWriter {
 public:
  virtual ~QosWriter() = default;
  virtual Result<void> SetDcb(const std::string& netdev, const DcbWrite& write) = 0;
  virtual Result<void> DeleteDcbApps(const std::string& netdev,
                                     const std::vector<DcbApp>& apps) = 0;
  virtual Result<void> WriteDcqcn(const std::string& netdev, bool np, int prio, bool enable) = 0;
  virtual Result<void> WriteTcpEcn(int value) = 0;
  virtual Result<void> WriteRoceTos(const std::string& rdma_device, uint32_t port, int tos) = 0;
  /// ecn/roce_np/<param> (np) or ecn/roce_rp/<param>: CNP marking and DCQCN parameters.
  virtual Result<void> WriteDcqcnParam(const std::string& netdev, bool np, const std::string& param,
                                       uint64_t value) = 0;
};

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

enum class RemediationState : uint8_t {
  kInSync,        // nothing to do
  kActed,         // writes were made in this step
  kBackoff,       // drift, waiting for the next allowed attempt
  kGaveUp,        // too many attempts that did not hold; alert and leave it to a human
  kDryRun,        // drift, plan logged, nothing written
  kObserveOnly,   // drift only in fields remediation does not touch (absent, unreadable, mtu)
  kBlockedNotPf,  // VF, SF, veth, ...: never written
  kBlockedBond,   // bond member or mlx5_bond_* (RoCE LAG): never written
  kBlockedDown,   // link not up
  kBlockedDriverNotReady,  // the driver-ready sentinel is missing
  kBlockedStorm,           // a PFC storm is active: changing PFC now would make it worse
  kBlockedUnknownStorm,    // the storm detector cannot yet say "no storm" (StormGuard::kUnknown)
  kBlockedPolicyUnresolved,  // the device's policy rule could not be evaluated
  kBlockedStateUnavailable,  // the state file cannot be read or written: enforce observes
  kBlockedApplyStuck,        // an earlier apply is still running past its deadline
};
std::string_view RemediationStateName(RemediationState state);
inline constexpr RemediationState kAllRemediationStates[] = {
    RemediationState::kInSync,       RemediationState::kActed,
    RemediationState::kBackoff,      RemediationState::kGaveUp,
    RemediationState::kDryRun,       RemediationState::kObserveOnly,
    RemediationState::kBlockedNotPf, RemediationState::kBlockedBond,
    RemediationState::kBlockedDown,  RemediationState::kBlockedDriverNotReady,
    RemediationState::kBlockedStorm, RemediationState::kBlockedUnknownStorm,
    RemediationState::kBlockedPolicyUnresolved, RemediationState::kBlockedStateUnavailable,
    RemediationState::kBlockedApplyStuck};

/// The guardrail verdict alone: a blocked state, or nullopt when writes are allowed.
std::optional<RemediationState> CheckGuardrails(const DeviceContext& context);

struct RemediationOptions {
  RemediationMode mode = RemediationMode::kOff;
  std::chrono::seconds base_backoff{30};    // wait after the first attempt; doubles per attempt
  std::chrono::seconds max_backoff{600};    // cap of the wait
  int max_attempts = 5;                     // attempts before giving up
  std::chrono::seconds stable_reset{3600};  // in sync this long: attempts start from zero again
  /// Writes of one pass stop once this much time went into them (the write under way finishes,
  /// one netlink or sysfs write at most): an apply cannot keep the sampler thread, which also
  /// feeds the systemd watchdog, past WatchdogSec. The rest waits for the next pass without
  /// costing an attempt. docs/remediation.md "Watchdog" derives the bound.
  std::chrono::milliseconds apply_budget{3000};
};

/// Result labels of roce_qos_remediations_total.
inline constexpr std::string_view kResultSuccess = "success";    // written and read back equal
inline constexpr std::string_view kResultFailed = "failed";      // the write itself failed
inline constexpr std::string_view kResultMismatch = "mismatch";  // written, read back different
inline constexpr std::string_view kResultDryRun = "dry_run";     // planned only
inline constexpr std::string_view kResultSkipped = "skipped";    // not sent: an earlier one failed

struct ActionRecord {
  QosField field;
  std::string description;  // DescribeAction
  std::string_view result;
  std::string error;
};

/// Per-device remediation state machine: rate limit with exponential back-off, give-up after
/// max_attempts, audit log and counters. Not thread-safe; owned by the sampler thread.
class Remediator {
 public:
  using Clock = std::chrono::steady_clock;
  /// Re-reads the device after writes (verification and the add-before-delete step).
  using Reread = std::function<ObservedQos()>;
  using Now = std::function<Clock::time_point()>;

  struct DeviceStatus {
    RemediationState state = RemediationState::kInSync;
    int attempts = 0;  // since the last stable in-sync period
    bool gave_up = false;
    std::optional<Clock::time_point> next_allowed;
    std::optional<Clock::time_point> in_sync_since;
    std::vector<Clock::time_point> attempt_times;  // for tests and the log (last 16 kept)
    std::map<std::pair<QosField, std::string>, uint64_t> counts;  // (field, result) -> n
    std::string last_dry_run_plan;
    /// PolicyFingerprint of the effective policy the attempts were made for: a reload that leaves
    /// it unchanged leaves attempts, back-off and give-up alone.
    std::string policy_hash;
    bool apply_in_progress = false;  // between the first write and the verification read
    /// The state file said an apply was under way when the previous process ended: the device
    /// may be half-written. Cleared once the device reads in sync.
    bool interrupted_apply = false;
  };

  /// `store` (may be null) keeps attempts, back-off, give-up and applies in progress across
  /// restarts; it is loaded here. `now` measures the apply budget (tests inject a clock).
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

  const DeviceStatus* Status(const std::string& netdev) const;
  /// Drops devices that vanished.
  void Retain(const std::vector<std::string>& present);
  RemediationMode mode() const { return options_.mode; }

 private:
  struct Outcome;  // one action's fate in Execute
  /// A new target for one device: its give-up state and back-off start over.
  static void StartOver(const std::string& netdev, const std::string& policy_hash,
                        DeviceStatus* status);
  RemediationState StepInSync(const std::string& netdev, Clock::time_point now,
                              DeviceStatus& status);
  RemediationState StepDryRun(const std::string& netdev, const std::vector<RemediationAction>& plan,
                              std::vector<ActionRecord>* records, DeviceStatus& status);
  RemediationState StepEnforce(const std::string& netdev, const QosPolicy& policy,
                               Clock::time_point now, const Reread& reread,
                               std::vector<ActionRecord>* records,
                               std::optional<ObservedQos>* after, DeviceStatus& status);
  /// Makes the writes in order, stopping at the first that fails or when the pass budget is
  /// spent; the outcome of each action, in plan order. False when the budget cut it short.
  bool Execute(const std::string& netdev, const std::vector<RemediationAction>& plan,
               const Reread& reread, std::vector<Outcome>& outcomes);
  /// One write (a DCB batch, a delete, one sysfs/procfs file).
  Result<void> Send(const std::string& netdev, const RemediationAction& action, const DcbWrite& dcb,
                    const Reread& reread);
  void Verify(const std::string& netdev, const QosPolicy& policy,
              const std::vector<Outcome>& outcomes, const ObservedQos& after,
              std::vector<ActionRecord>* records, DeviceStatus& status);
  void Restore(const std::string& netdev, Clock::time_point now, DeviceStatus& status);
  void Persist();

  RemediationOptions options_;
  QosWriter* writer_;
  RemediationStore* store_;
  Now now_;
  std::map<std::string, DeviceStatus> devices_;
  PersistedState restored_;              // loaded at start, not yet claimed by a Step
  std::optional<PersistedState> saved_;  // what the file holds, to write only changes
  Clock::time_point step_now_{};         // `now` of the running Step
  std::optional<Clock::time_point> pass_started_;
  bool wrote_this_pass_ = false;
  bool tcp_ecn_written_this_pass_ = false;
};

/// True when the process has CAP_NET_ADMIN in its effective set (capget(2)); enforce mode
/// refuses to start without it.
bool HasNetAdminCapability();

}  // namespace roceqos
