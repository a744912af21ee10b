#pragma once

// The QoS part of a published snapshot (the extension points snapshot.h declares): what was
// observed for one netdev, its drift against its effective policy and the remediation state, plus
// the host-wide QoS status. Immutable once published; rendered by metrics_qos.cc.

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "collectors/monitor.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/remediate.h"

namespace roceqos {

struct QosDeviceState {
  ObservedQos observed;
  DeviceDrift drift;
  std::string policy_rule;  // the policy rule that chose the effective policy ("default")
  std::string policy_hash;  // PolicyFingerprint of the effective policy
  std::string state_hash;   // StateFingerprint of the observation
  std::map<QosField, uint64_t> drift_events;
  std::chrono::system_clock::time_point last_change{};  // last change of the observed state
  std::chrono::steady_clock::time_point polled_at{};    // last full read of every source
  uint64_t policy_generation = 0;                       // the policy this was evaluated against
  std::optional<RemediationState> remediation;          // nullopt when --remediation=off
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
