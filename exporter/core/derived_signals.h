#pragma once

// What the derive stage attaches to each DeviceSnapshot (snapshot.h `derived`): the windowed
// peaks and ratios and the storm state of one netdev. Plain data beside the snapshot;
// exporter/signals computes it (derive.h), metrics_derived.cc renders it. Definitions:
// docs/signals.md.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/enum_names.h"
#include "collectors/ethtool_map.h"

namespace roceqos {

inline constexpr size_t kMaxWindows = 4;

/// Why an interval was not used.
enum class DiscardReason : uint8_t { kCounterReset, kIdentityChange, kClock, kImplausible };
inline constexpr EnumName<DiscardReason> kDiscardReasonNames[] = {
    {DiscardReason::kCounterReset, "counter_reset"},
    {DiscardReason::kIdentityChange, "identity_change"},
    {DiscardReason::kClock, "clock"},
    {DiscardReason::kImplausible, "implausible"},
};
inline constexpr size_t kDiscardReasonCount = std::size(kDiscardReasonNames);

/// Signals of one (priority, direction) whose pause counters are present.
struct PauseSignals {
  uint8_t prio = 0;
  Direction direction = Direction::kRx;
  /// Per configured window (same order): the highest per-interval pause frame rate (frames/s)
  /// and paused-time ratio (0..1). 0 when the window holds no valid interval.
  std::array<double, kMaxWindows> rate_peak{};
  std::array<double, kMaxWindows> paused_ratio_peak{};
};

/// The two DCQCN roles of a port, each with its own PFC-vs-ECN quotient (docs/signals.md).
enum class EcnRole : uint8_t {
  kReactionPoint,      // the port as a sender: pause received against CNPs handled
  kNotificationPoint,  // the port as a receiver: pause sent against ECN-marked packets received
};
inline constexpr EnumName<EcnRole> kEcnRoleNames[] = {
    {EcnRole::kReactionPoint, "rp"},
    {EcnRole::kNotificationPoint, "np"},
};
inline constexpr size_t kEcnRoleCount = std::size(kEcnRoleNames);

/// PFC against ECN for one role of a netdev over one window.
struct RoleEcnSignals {
  /// The window holds a span between two reads of the role's RDMA counter, with its lossless pause
  /// counters, and no span with pauses longer than the window.
  bool known = false;
  uint64_t pause_frames = 0;  // rp: rx lossless pause frames; np: tx lossless pause frames
  uint64_t ecn_events = 0;    // rp: rp_cnp_handled; np: np_ecn_marked_roce_packets
  double pauses_per_ecn = 0;  // pause_frames / max(ecn_events, 1): never NaN or Inf
  bool ecn_silent = false;    // pause_frames > 0 && ecn_events == 0
};

/// PFC-vs-ECN signals of a netdev over one window (docs/signals.md for the exact definition).
struct EcnWindowSignals {
  std::array<RoleEcnSignals, kEcnRoleCount> roles{};  // indexed by EcnRole

  bool cnp_known = false;  // the window holds an interval with np_cnp_sent and np_ecn_marked
  uint64_t cnp_sent = 0;
  uint64_t ecn_marked = 0;
  double cnp_to_ecn_ratio = 0;  // cnp_sent / max(ecn_marked, 1)

  const RoleEcnSignals& Role(EcnRole role) const { return roles[static_cast<size_t>(role)]; }
};

/// What a port is in a PFC storm on a priority (docs/signals.md, "Storm role").
enum class StormRole : uint8_t {
  kNone,
  kOrigin,  // it pauses its switch port while its own receive on the priority stalls
  kVictim,  // it is paused while the traffic it sends on the priority is held, and is no origin
};
inline constexpr EnumName<StormRole> kStormRoleNames[] = {
    {StormRole::kNone, "none"},
    {StormRole::kOrigin, "origin"},
    {StormRole::kVictim, "victim"},
};

struct PrioStormRole {
  uint8_t prio = 0;
  StormRole role = StormRole::kNone;
};

struct StormSignals {
  uint8_t prio = 0;
  Direction direction = Direction::kRx;
  bool stormed = false;
  uint64_t episodes = 0;
  double last_episode_seconds = 0;  // 0 until an episode has been restored
};

/// Whether the derivation can vouch that a device is free of PFC storms, for enforce mode's storm
/// guard (docs/signals.md, "Storm guard"). Only kClear allows a write: a device the derivation
/// cannot see well enough must be treated as possibly stormed.
enum class StormEvidence : uint8_t {
  kClear,    // history long enough to have caught a storm, and none of it shows one
  kStorm,    // a storm is declared, or a detection run is under way
  kUnknown,  // too little history (just started, reset, gap), or it shows storm signs
};
inline constexpr EnumName<StormEvidence> kStormEvidenceNames[] = {
    {StormEvidence::kClear, "clear"},
    {StormEvidence::kStorm, "storm"},
    {StormEvidence::kUnknown, "unknown"},
};

struct DeviceSignals {
  std::string netdev;
  std::string rdma_device;  // empty when no RDMA port is bound
  uint32_t rdma_port = 0;
  std::vector<PauseSignals> pause;  // sorted by (prio, direction)
  std::array<EcnWindowSignals, kMaxWindows> ecn{};
  std::vector<StormSignals> storms;        // lossless priorities, plus any with episodes
  std::vector<PrioStormRole> storm_roles;  // each priority of `storms`, ascending
  std::array<uint64_t, kDiscardReasonCount> discarded_intervals{};
  StormEvidence storm_evidence = StormEvidence::kUnknown;
  /// The newest counter read the evidence rests on (the sampler's monotonic clock: steady_clock's
  /// epoch in production). The evidence says nothing about the time since: a write gate takes it
  /// only while this read is recent (docs/signals.md, "Storm guard").
  std::chrono::nanoseconds storm_evidence_read_at{};
  /// While the evidence is `unknown` and a read could move it towards `clear`: when that read is
  /// best taken (the follow-up the derivation waits for, the end of the quiet span, or the latest
  /// time that keeps the span without a gap). Empty when the evidence is `clear` or `storm`.
  std::optional<std::chrono::nanoseconds> storm_evidence_next_read;

  bool AnyStorm() const;
};

struct DerivedDeviceSignals {
  DeviceSignals signals;
  /// `window` label values, in the order of the per-window arrays in `signals`; one vector
  /// shared by every device and snapshot.
  std::shared_ptr<const std::vector<std::string>> window_labels;
};

}  // namespace roceqos
