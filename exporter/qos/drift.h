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
#include "exporter/qos/policy.h"

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
std::string_view QosFieldName(QosField field);  // the policy key / `field` label value

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
std::string_view FieldStatusName(FieldStatus status);

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
