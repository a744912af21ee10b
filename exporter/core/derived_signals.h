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

/// PFC-vs-ECN signals of a netdev over one window (docs/signals.md for the exact definition).
struct EcnWindowSignals {
  bool known = false;  // the window holds an interval with both pause and RDMA ECN counters
  uint64_t lossless_pause_frames = 0;
  uint64_t ecn_events = 0;      // np_ecn_marked_roce_packets + rp_cnp_handled
  double pfc_to_ecn_ratio = 0;  // lossless_pause_frames / max(ecn_events, 1): never NaN or Inf
  bool ecn_silent = false;      // lossless_pause_frames > 0 && ecn_events == 0

  bool cnp_known = false;  // the window holds an interval with np_cnp_sent and np_ecn_marked
  uint64_t cnp_sent = 0;
  uint64_t ecn_marked = 0;
  double cnp_to_ecn_ratio = 0;  // cnp_sent / max(ecn_marked, 1)
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
  std::vector<StormSignals> storms;  // lossless priorities, plus any with episodes
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
