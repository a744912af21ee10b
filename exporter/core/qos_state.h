#pragma once

// The QoS part of a published snapshot (DeviceSnapshot::qos, Snapshot::qos): what was observed for
// one netdev, its drift against its effective policy and the remediation state, plus the host-wide
// QoS status. Plain data beside the snapshot; exporter/qos fills it (drift.h, remediate.h hold the
// logic and the name tables), metrics_qos.cc renders it. Immutable once published.

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/dcb.h"
#include "collectors/dcqcn_params.h"
#include "collectors/host.h"
#include "collectors/link_facts.h"
#include "collectors/monitor.h"

namespace roceqos {

enum class QosField : uint8_t {
  kTrust,
  kPfc,
  kDscpPrio,
  kPrioTc,
  kEts,
  kBuffer,
  kRoceTos,
  kDcqcnNp,
  kDcqcnRp,
  kTcpEcn,
  kMtu,
  kLinkSpeedMin,
  kSriovNumVfs,
  // CNP marking (MOFED ecn/roce_np)
  kCnpDscp,
  kCnpPrio,
  kDcqcnParams,  // the DCQCN rate-control parameters the policy lists (one verdict for all)
};
inline constexpr QosField kAllQosFields[] = {
    QosField::kTrust,       QosField::kPfc,     QosField::kDscpPrio, QosField::kPrioTc,
    QosField::kEts,         QosField::kBuffer,  QosField::kRoceTos,  QosField::kDcqcnNp,
    QosField::kDcqcnRp,     QosField::kTcpEcn,  QosField::kMtu,      QosField::kLinkSpeedMin,
    QosField::kSriovNumVfs, QosField::kCnpDscp, QosField::kCnpPrio,  QosField::kDcqcnParams};

/// The RoCE ToS of one RDMA port bound to the device.
struct PortTos {
  std::string device;  // RDMA device, e.g. mlx5_0
  uint32_t port = 0;
  RoceTosState tos;
  bool operator==(const PortTos&) const = default;
};

/// Everything observed about one netdev's QoS in one poll.
struct ObservedQos {
  Observed<QosState> dcb;  // absent: the device has no dcbnl_ops (EOPNOTSUPP)
  DcqcnState dcqcn;
  std::vector<PortTos> roce_tos;  // empty: no RDMA port bound
  Observed<int> tcp_ecn;
  Observed<uint32_t> mtu;
  LinkFacts link;
  Observed<uint16_t> pfc_storm_timeout_ms;
  Observed<DcqcnParams> dcqcn_params;  // MOFED ecn/roce_{rp,np}/<param>; absent without MOFED
  bool operator==(const ObservedQos&) const = default;
};

enum class FieldStatus : uint8_t {
  kInSync,  // observed equals the policy
  kDrift,   // observed differs from the policy
  kAbsent,  // cannot be verified: the source does not exist on this device (not drift)
  kFailed,  // the source exists but could not be read (unknown; no drift series)
};

struct FieldVerdict {
  QosField field;
  FieldStatus status = FieldStatus::kInSync;
  std::string expected;  // policy value, human readable ("[3]", "dscp", "106")
  std::string actual;    // observed value, or why it is absent/failed
  std::string impact;    // why this drift matters (empty when in sync)

  bool Drifted() const { return status == FieldStatus::kDrift; }
  /// Known: in sync or drifted. Absent and unreadable fields say nothing about drift.
  bool Known() const { return status == FieldStatus::kInSync || status == FieldStatus::kDrift; }
};

/// One DCQCN parameter the policy lists (the detail behind the dcqcn_params verdict).
struct DcqcnParamVerdict {
  DcqcnRole role = DcqcnRole::kReactionPoint;
  std::string name;
  FieldStatus status = FieldStatus::kInSync;
  uint64_t expected = 0;
  uint64_t actual = 0;  // meaningful when in sync or drifted
};

struct DeviceDrift {
  std::vector<FieldVerdict> fields;  // one per field the policy checks, in kAllQosFields order
  std::vector<DcqcnParamVerdict> dcqcn_params;  // per listed parameter (role, name order)

  /// In sync when no checked field differs and none failed to read. A field whose source this
  /// device lacks (kAbsent) cannot be verified; it neither breaks nor proves being in sync.
  bool InSync() const;
  size_t Unverifiable() const;  // fields with kAbsent
  const FieldVerdict* Find(QosField field) const;
};

enum class RemediationMode : uint8_t { kOff, kDryRun, kEnforce };
inline constexpr RemediationMode kAllRemediationModes[] = {
    RemediationMode::kOff, RemediationMode::kDryRun, RemediationMode::kEnforce};

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
  kBlockedDriverNotReady,    // the driver-ready sentinel is missing
  kBlockedStorm,             // a PFC storm is active: changing PFC now would make it worse
  kBlockedUnknownStorm,      // the storm detector cannot yet say "no storm" (StormGuard::kUnknown)
  kBlockedPolicyUnresolved,  // the device's policy rule could not be evaluated
  kBlockedStateUnavailable,  // the state file cannot be read or written: enforce observes
  kBlockedApplyStuck,        // an earlier apply is still running past its deadline
  kBlockedIdentityChanged,   // at the write, the device's PCI function has another netdev
  kBlockedLockLost,          // the enforcer lock file was replaced: this process never writes
};
inline constexpr RemediationState kAllRemediationStates[] = {
    RemediationState::kInSync,
    RemediationState::kActed,
    RemediationState::kBackoff,
    RemediationState::kGaveUp,
    RemediationState::kDryRun,
    RemediationState::kObserveOnly,
    RemediationState::kBlockedNotPf,
    RemediationState::kBlockedBond,
    RemediationState::kBlockedDown,
    RemediationState::kBlockedDriverNotReady,
    RemediationState::kBlockedStorm,
    RemediationState::kBlockedUnknownStorm,
    RemediationState::kBlockedPolicyUnresolved,
    RemediationState::kBlockedStateUnavailable,
    RemediationState::kBlockedApplyStuck,
    RemediationState::kBlockedIdentityChanged,
    RemediationState::kBlockedLockLost};

/// Why a Remediator suspends enforce (Remediator::suspended_reason()).
inline constexpr std::string_view kEnforceSuspendedReasons[] = {"state_unreadable",
                                                                "state_unwritable"};

/// Why the embedded default's defaults do or do not check a port (docs/policy.md "RoCE ports").
/// The defaults apply to every Mellanox PF, but a port at factory defaults that carries no RoCE
/// (a storage port, an unused second port) is not a RoCE port: it is shown unconfigured and its
/// differences page nobody.
enum class RocePortReason : uint8_t {
  kRule,          // a devices: rule chose the policy: the site named the port
  kAllPorts,      // roce_ports: all (the site asked for every port)
  kConfigured,    // not at factory defaults: PFC on, trust dscp, a DSCP entry or a global tclass
  kTraffic,       // its RoCE counters are above zero (traffic since the driver loaded)
  kRemembered,    // configured, carrying RoCE or in sync earlier in this process (per PCI function)
  kUnknown,       // factory defaults or traffic cannot be established (a read failed): checked
  kNoRoceTraffic  // factory defaults, no RoCE traffic, never seen otherwise: unconfigured
};
inline constexpr RocePortReason kAllRocePortReasons[] = {
    RocePortReason::kRule,         RocePortReason::kAllPorts,   RocePortReason::kConfigured,
    RocePortReason::kTraffic,      RocePortReason::kRemembered, RocePortReason::kUnknown,
    RocePortReason::kNoRoceTraffic};

/// The outcome of the RoCE-port test for one device whose policy checks fields.
struct RocePortClass {
  bool checked = true;  // false: unconfigured, its verdicts are shown but never drift
  RocePortReason reason = RocePortReason::kRule;
  std::string detail;  // what the reason rests on, for `check` and the logs
  bool operator==(const RocePortClass&) const = default;
};

struct QosDeviceState {
  ObservedQos observed;
  DeviceDrift drift;
  std::string policy_rule;  // the policy rule that chose the effective policy ("default")
  std::string policy_hash;  // PolicyFingerprint of the effective policy
  /// The effective policy's `pfc:` (bit p = PFC on priority p); the derivation's lossless
  /// priorities while the DCB state cannot be read.
  std::optional<uint8_t> desired_pfc;
  std::string state_hash;  // StateFingerprint of the observation
  /// Whether the device is checked as a RoCE port; nullopt when its policy checks no field (rule
  /// "none" or unresolved). Unconfigured (checked false): `drift` still holds the verdicts, but
  /// no drift series is exported and nothing is remediated.
  std::optional<RocePortClass> roce_port;
  std::map<QosField, uint64_t> drift_events;
  std::chrono::system_clock::time_point last_change{};  // last change of the observed state
  std::chrono::steady_clock::time_point polled_at{};    // last poll (every source, see below)
  /// Last read of the MOFED ecn/ tree (ECN enables, CNP marking, DCQCN parameters), which the
  /// engine reads every --qos.dcqcn-poll-interval rather than at every poll.
  std::chrono::steady_clock::time_point dcqcn_polled_at{};
  uint64_t policy_generation = 0;               // the policy this was evaluated against
  std::optional<RemediationState> remediation;  // nullopt when --remediation=off
  std::map<std::pair<QosField, std::string>, uint64_t> remediation_counts;  // (field, result)
  /// The previous process was killed in the middle of an apply to this device (state file);
  /// true until the device reads in sync.
  bool interrupted_apply = false;
  /// When `observed` was read (by the sampler, or by the remediation worker after its writes):
  /// of two reads of a device, the newer is the one published.
  std::chrono::steady_clock::time_point observed_at{};
};

struct QosGlobalState {
  std::string policy_source;  // "embedded default" or the --config path
  bool policy_reload_success = true;
  std::chrono::system_clock::time_point policy_reload_time{};  // last reload attempt (or start)
  std::string policy_reload_error;                             // the rejection, when it failed
  RemediationMode remediation_mode = RemediationMode::kOff;
  /// --remediation=enforce was asked for, but another instance holds the node's enforce lock.
  bool enforce_held_elsewhere = false;
  /// Enforce observes for the rest of the process: one of kEnforceSuspendedReasons, or empty.
  std::string enforce_suspended_reason;
  /// Kernel notification received -> snapshot with the re-read state ready to publish.
  std::optional<double> last_detection_latency_seconds;
  double max_detection_latency_seconds = 0;
  uint64_t change_notifications = 0;  // DCB + link notifications that named a selected device
  /// Full re-reads after lost notifications, by ChangeEvent::ResyncReason (kResyncReasonNames).
  std::array<uint64_t, std::size(kResyncReasonNames)> monitor_resyncs{};
  bool monitor_running = false;  // false: polling only (the monitor could not start)
  Observed<int> tcp_ecn;         // host-wide, from the last poll
  /// A remediation pass is running past its deadline (a kernel call that does not return): no new
  /// pass starts, drifted devices show blocked_apply_stuck. apply_stuck_total counts the times.
  bool apply_stuck = false;
  uint64_t apply_stuck_total = 0;
};

}  // namespace roceqos
