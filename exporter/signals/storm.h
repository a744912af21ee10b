#pragma once

// PFC storm state machine for one (netdev, priority, direction), with the semantics of SONiC's PFC
// watchdog (docs/signals.md): a storm is declared once the storm condition has held without
// interruption for the detection time, and restored once it has been absent for the restoration
// time. Pure logic: time comes in with each observation, so tests need no clock.

#include <chrono>
#include <cstdint>
#include <optional>

#include "base/result.h"

namespace roceqos {

/// Monotonic time of a sample (steady clock, arbitrary epoch). Injected everywhere so the
/// derivation is deterministic.
using SampleTime = std::chrono::nanoseconds;

struct StormConfig {
  /// Paused-time ratio (Δpause_duration / Δt) at or above which an interval counts as stormed.
  double threshold = 0.8;
  std::chrono::milliseconds detection_time{200};
  std::chrono::milliseconds restoration_time{400};
};

// Ranges follow SONiC's `pfcwd start` (sonic-utilities pfcwd/main.py).
inline constexpr std::chrono::milliseconds kMinDetectionTime{100};
inline constexpr std::chrono::milliseconds kMaxDetectionTime{5000};
inline constexpr std::chrono::milliseconds kMinRestorationTime{100};
inline constexpr std::chrono::milliseconds kMaxRestorationTime{60000};

/// Validates the three `--storm.*` flags. Without a restoration time it defaults to twice the
/// detection time, as SONiC does. Errors name the flag and the accepted range.
Result<StormConfig> MakeStormConfig(double threshold, std::chrono::milliseconds detection_time,
                                    std::optional<std::chrono::milliseconds> restoration_time);

/// What one sampling interval says about a (netdev, priority, direction).
enum class StormVerdict : uint8_t {
  kUnknown,  // counters missing or the interval was discarded (reset, wrap doubt, identity change)
  kClear,    // the storm condition did not hold
  kCondition,  // paused ratio >= threshold and no packet made progress on the priority
  /// The condition may hold at the interval's end only: the pause counter moved by `tail` (at
  /// least half the detection time) without the whole interval qualifying. A storm that began
  /// inside the interval looks like this; so does heavy ordinary pause. It starts a candidate run
  /// credited from end - tail, which only a following kCondition interval can turn into a storm.
  kTailCondition,
};

struct StormInterval {
  SampleTime start{};
  SampleTime end{};
  StormVerdict verdict = StormVerdict::kUnknown;
  /// The NIC's own stall detector fired in this interval (tx_pause_storm_*_events increased).
  bool ground_truth_event = false;
  /// kTailCondition: the pause the interval may end in (its Δpause_duration).
  SampleTime tail{};
};

class StormDetector {
 public:
  enum class Transition : uint8_t { kNone, kStarted, kRestored };

  /// Feeds the next interval (intervals arrive in time order and do not overlap).
  Transition Observe(const StormInterval& interval, const StormConfig& config);

  bool stormed() const { return stormed_; }
  /// Episodes started since this detector was created (roce_pfc_storms_total).
  uint64_t episodes() const { return episodes_; }
  /// Length of the last completed episode: from the onset of the storm condition to the end of
  /// the last interval in which it held. Empty until an episode has been restored.
  std::optional<SampleTime> last_episode_duration() const { return last_episode_duration_; }
  /// Onset of the current episode (start of the first interval of the condition run).
  std::optional<SampleTime> onset() const {
    return stormed_ ? std::optional<SampleTime>(onset_) : std::nullopt;
  }
  /// While a detection run is under way (the condition holds, no storm declared yet): the time at
  /// which the run will have lasted the detection time. A sample taken then can declare the storm
  /// without waiting for the rest of the period.
  std::optional<SampleTime> detection_due(const StormConfig& config) const {
    if (stormed_ || !condition_since_) return std::nullopt;
    return *condition_since_ + config.detection_time;
  }
  /// The run under way rests on a kTailCondition credit alone: no interval proved it yet.
  bool tail_candidate() const { return !stormed_ && condition_since_ && tail_candidate_; }

 private:
  bool stormed_ = false;
  uint64_t episodes_ = 0;
  SampleTime onset_{};
  std::optional<SampleTime> condition_since_;  // start of the current run of condition intervals
  bool tail_candidate_ = false;                // condition_since_ was credited from a tail
  std::optional<SampleTime> clear_since_;      // start of the current run of clear intervals
  SampleTime last_condition_end_{};
  std::optional<SampleTime> last_episode_duration_;
};

}  // namespace roceqos
