#pragma once

// Drift: the observed QoS state of a device compared with its effective policy, field by field.
// Pure functions of plain values, so tests need no kernel. Semantics: docs/policy.md "Drift".

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/dcb.h"
#include "collectors/dcqcn_params.h"
#include "collectors/host.h"
#include "collectors/link_facts.h"
#include "exporter/core/qos_state.h"
#include "exporter/qos/policy.h"

namespace roceqos {

std::string_view QosFieldName(QosField field);  // the policy key / `field` label value
std::string_view FieldStatusName(FieldStatus status);

/// Compares one device's observation with its effective policy. Unchecked fields yield no verdict.
DeviceDrift EvaluateDrift(const QosPolicy& policy, const ObservedQos& observed);

/// A stable 16-hex-digit hash of the observed configuration (not counters), so a fleet can find
/// the node whose state differs.
std::string StateFingerprint(const ObservedQos& observed);

/// Per-device history across polls: drift events (entries into drift per field) and the time the
/// observed state last changed. Not thread-safe; owned by the sampler thread.
class DriftTracker {
 public:
  /// A field's drift is logged when it starts or stops (netdev, field, expected, actual), at most
  /// once per field per kLogInterval; a flapping field logs its state at the end of the interval
  /// with the number of transitions not logged, so the log always converges to the truth.
  static constexpr std::chrono::seconds kLogInterval{10};
  struct FieldLogState {
    bool drifted = false;  // the state the last line reported (nothing logged = not drifted)
    std::chrono::system_clock::time_point at{};
    uint64_t unlogged_transitions = 0;
  };

  struct DeviceHistory {
    std::map<QosField, uint64_t> drift_events;  // transitions into drift (incl. the first poll)
    std::map<QosField, bool> drifted;           // last known drift per field
    std::string state_fingerprint;
    std::chrono::system_clock::time_point last_change{};  // first poll counts as a change
    std::map<QosField, FieldLogState> log;                // what the log last said per field
  };

  /// Records one evaluation; returns the updated history for that device.
  const DeviceHistory& Record(const std::string& netdev, const DeviceDrift& drift,
                              const std::string& state_fingerprint,
                              std::chrono::system_clock::time_point now);
  /// Drops devices that vanished so they leave no stale series.
  void Retain(const std::vector<std::string>& present);
  const DeviceHistory* Find(const std::string& netdev) const;

 private:
  static void LogDriftChange(const std::string& netdev, const FieldVerdict& verdict,
                             std::chrono::system_clock::time_point now, FieldLogState& log);

  std::map<std::string, DeviceHistory> devices_;
};

}  // namespace roceqos
