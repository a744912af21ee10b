#pragma once

// Turns high-frequency counter samples into the signals a 15 s scrape cannot see: windowed peaks
// of the PFC pause rate and paused-time ratio, PFC against ECN per DCQCN role with an explicit
// "ECN silent" flag, CNP-vs-ECN consistency, and the PFC storm state machine. Definitions:
// docs/signals.md.
//
// Pure logic: every sample carries its own monotonic timestamp; nothing here reads a clock or
// the kernel, so the sampler calls it and tests feed it by hand.

#include <array>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/enum_names.h"
#include "base/result.h"
#include "collectors/dcb.h"
#include "collectors/device.h"
#include "collectors/ethtool_map.h"
#include "exporter/core/derived_signals.h"
#include "exporter/signals/storm.h"

namespace roceqos {

/// Flat positions of the counters the derivation needs in a DeviceSample. `direction` is
/// Direction::kRx or Direction::kTx.
namespace signal_slot {
inline constexpr size_t kPerDirection = kNumPriorities;
inline constexpr std::array<Direction, 2> kDirections{Direction::kRx, Direction::kTx};
constexpr size_t DirectionOffset(Direction direction) {
  return direction == Direction::kTx ? kPerDirection : 0;
}
/// rx/tx_prio%d_pause (64-bit PPCNT)
constexpr size_t PauseFrames(Direction d, int prio) { return 0 + DirectionOffset(d) + prio; }
/// rx/tx_prio%d_pause_duration, microseconds (64-bit PPCNT)
constexpr size_t PauseDurationMicros(Direction d, int prio) {
  return 16 + DirectionOffset(d) + prio;
}
/// rx/tx_prio%d_packets (64-bit PPCNT)
constexpr size_t PrioPackets(Direction d, int prio) { return 32 + DirectionOffset(d) + prio; }
inline constexpr size_t kStormWarningEvents = 48;      // tx_pause_storm_warning_events
inline constexpr size_t kStormErrorEvents = 49;        // tx_pause_storm_error_events
inline constexpr size_t kNpCnpSent = 50;               // RDMA hw counter np_cnp_sent
inline constexpr size_t kNpEcnMarkedRocePackets = 51;  // np_ecn_marked_roce_packets
inline constexpr size_t kRpCnpHandled = 52;            // rp_cnp_handled
inline constexpr size_t kCount = 53;
}  // namespace signal_slot

/// Bit width of the hardware counter behind a slot. Every slot above is 64 bits wide on mlx5
/// (PPCNT, QUERY_CONG_STATISTICS `*_high/_low`: docs/kernel-interfaces.md §5.7); 32-bit Q counters
/// (out_of_buffer, out_of_sequence, ...) are not inputs of the derivation but go through the same
/// StepCounter rule when callers need their deltas.
unsigned SignalSlotWidthBits(size_t slot);

/// One step of a hardware counter between two samples.
struct CounterStep {
  enum class Kind : uint8_t {
    kForward,  // current >= previous
    kWrapped,  // went backwards near the top of its width: it wrapped; `delta` is modular
    kReset,    // went backwards anywhere else: the counter restarted, `delta` is meaningless
  };
  Kind kind = Kind::kForward;
  uint64_t delta = 0;
};

/// A backwards step is a wrap only if the counter is narrower than 64 bits and the modular
/// increase is at most a quarter of its range (previous in the top quarter, current small);
/// a 64-bit counter never wraps in practice (2^64 events at 10^9/s take 584 years).
CounterStep StepCounter(uint64_t previous, uint64_t current, unsigned width_bits);

/// Identity of the counters in a sample. If the port part changes, the previous values belong to
/// a different incarnation (a driver reload re-registers the netdev with a new ifindex; a new
/// ethtool string set re-maps names to positions) and the interval is discarded. If only the RDMA
/// part changes (the RDMA device was re-created, or its read failed in one of the two samples),
/// only the RDMA inputs of that interval are unknown.
struct SampleIdentity {
  int32_t ifindex = 0;
  uint64_t ethtool_generation = 0;  // changes of the ethtool string set seen so far
  uint32_t rdma_device_index = 0;   // RDMA_NLDEV_ATTR_DEV_INDEX, 0 when no RDMA port was read
  uint32_t rdma_port = 0;           // RDMA_NLDEV_ATTR_PORT_INDEX, 0 when no RDMA port was read

  bool SamePort(const SampleIdentity& o) const {
    return ifindex == o.ifindex && ethtool_generation == o.ethtool_generation;
  }
  bool SameRdma(const SampleIdentity& o) const {
    return rdma_device_index == o.rdma_device_index && rdma_port == o.rdma_port;
  }
  bool operator==(const SampleIdentity&) const = default;
};

/// One device at one instant: what the sampler read for a netdev and its bound RDMA port.
struct DeviceSample {
  SampleTime time{};
  SampleIdentity identity;
  /// Labels of the RDMA port bound to the netdev; empty when there is none.
  std::string rdma_device;
  uint32_t rdma_port = 0;
  /// Lossless priorities (bit p = PFC enabled on priority p, DCB ieee_pfc.pfc_en). Empty when the
  /// QoS state is unknown: then the priorities whose pause counters are present are used, since
  /// mlx5 emits them only for PFC-enabled priorities (docs/kernel-interfaces.md §3.1).
  std::optional<uint8_t> lossless_prios;
  /// When the RDMA counters in `values` were read; the sampler carries a read forward between
  /// reads (port_scheduler.h), so equal times mean the same read. 0: unknown, every sample is
  /// taken for a new read.
  SampleTime rdma_read_at{};
  std::array<uint64_t, signal_slot::kCount> values{};
  std::bitset<signal_slot::kCount> present;

  void Set(size_t slot, uint64_t value) {
    values[slot] = value;
    present.set(slot);
  }
  uint8_t LosslessPrios() const;
};

/// Copies the mapped ethtool counters the derivation needs into `sample`. Mapped positions out of
/// range of `counters` are ignored (a racing string-set change, docs/kernel-interfaces.md §4.4).
void FillFromEthtool(const CounterSet& counters, std::span<const MappedCounter> mapping,
                     DeviceSample& sample);

/// Finds np_cnp_sent, np_ecn_marked_roce_packets and rp_cnp_handled in RDMA hw counters. The
/// positions are indexed once per names vector (CounterSet::names is shared per generation).
class RdmaSignalIndex {
 public:
  void Fill(const CounterSet& counters, DeviceSample& sample);

 private:
  std::shared_ptr<const std::vector<std::string>> indexed_names_;
  std::array<int32_t, 3> positions_{-1, -1, -1};
};

std::string_view DiscardReasonName(DiscardReason reason);

inline constexpr std::chrono::seconds kWindowBucket{1};
inline constexpr std::chrono::seconds kMaxWindow{300};

struct DeriveConfig {
  /// Sliding windows over which peaks and ratios are exported, ascending (docs/signals.md,
  /// "Scrape window"). Each a whole number of seconds in 1s..5m; at most kMaxWindows.
  std::vector<std::chrono::seconds> windows{std::chrono::seconds(15), std::chrono::seconds(60)};
  StormConfig storm;
  /// Longest interval between two reads of a device that the storm guard's quiet span may
  /// contain; a longer one restarts the span (docs/signals.md, "Storm guard"). The app sets it to
  /// StormGapBound(--sampler.period).
  std::chrono::nanoseconds max_read_gap = std::chrono::milliseconds(500);
};

/// Two sampler periods: a port read at the sampler's cadence stays within it even when one wake
/// comes late; a longer interval means the port was not being read at that cadence.
constexpr std::chrono::nanoseconds StormGapBound(std::chrono::nanoseconds sampler_period) {
  return 2 * sampler_period;
}

/// Validates and sorts the windows (--derive.windows). Errors say which value is wrong.
Result<DeriveConfig> MakeDeriveConfig(std::vector<std::chrono::seconds> windows, StormConfig storm);

/// "15s", "1m", "5m": the `window` label value.
std::string WindowLabel(std::chrono::seconds window);

std::string_view StormEvidenceName(StormEvidence evidence);

/// Everything the derivation publishes with one snapshot; devices sorted by netdev.
struct DerivedSignals {
  std::vector<std::chrono::seconds> windows;
  std::vector<DeviceSignals> devices;

  const DeviceSignals* Find(std::string_view netdev) const;
};

class SignalDeriver {
 public:
  explicit SignalDeriver(DeriveConfig config);
  ~SignalDeriver();
  SignalDeriver(const SignalDeriver&) = delete;
  SignalDeriver& operator=(const SignalDeriver&) = delete;

  /// Feeds the newest sample of `netdev`. Samples of one device arrive in time order; the first
  /// one of a device is only a baseline.
  void Observe(const std::string& netdev, const DeviceSample& sample);
  /// Drops every trace of a device that vanished: its series leave the next snapshot.
  void Forget(std::string_view netdev);
  /// Forgets every device not in `present` (sorted or not).
  void RetainOnly(std::span<const std::string> present);

  /// The signals as of the newest sample of each device.
  DerivedSignals Signals() const;
  /// The signals of one device; empty if it was never observed (or forgotten).
  std::optional<DeviceSignals> SignalsOf(std::string_view netdev) const;

  /// The earliest time at which a sample could declare a PFC storm that is still only suspected:
  /// the end of a detection run under way, or half a detection time after an interval that may
  /// end in a storm (StormVerdict::kTailCondition: its onset is credited from the pause counter).
  /// Sampling then, instead of at the port's next periodic read, bounds the detection latency by
  /// the port's period + half a detection time (docs/signals.md). Only times after `now` count: a
  /// device whose read failed keeps the request of its last sample, which must not repeat forever.
  /// Empty when nothing is suspected.
  std::optional<SampleTime> NextSampleDue(SampleTime now) const;
  /// Per device, what NextSampleDue considers: the sampler reads exactly those ports then, even
  /// when their own schedule would read them later (exporter/sampling/port_scheduler.h).
  std::vector<std::pair<std::string, SampleTime>> SamplesDue(SampleTime now) const;

  const DeriveConfig& config() const { return config_; }
  size_t device_count() const { return devices_.size(); }

 private:
  struct DeviceState;
  DeviceSignals BuildSignals(const std::string& netdev, const DeviceState& state) const;

  DeriveConfig config_;
  std::map<std::string, std::unique_ptr<DeviceState>, std::less<>> devices_;
};

}  // namespace roceqos
