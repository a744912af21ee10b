#include "exporter/signals/storm.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <string>

namespace roceqos {
namespace {

std::string Millis(std::chrono::milliseconds value) { return std::to_string(value.count()) + "ms"; }

}  // namespace

Result<StormConfig> MakeStormConfig(double threshold, std::chrono::milliseconds detection_time,
                                    std::optional<std::chrono::milliseconds> restoration_time) {
  // A ratio of 0 would call every idle interval a storm; above 1 nothing could ever reach it
  // because the ratio is clamped to 1.
  if (!std::isfinite(threshold) || threshold <= 0.0 || threshold > 1.0) {
    return MakeError(
        EINVAL, "--storm.threshold=" + std::to_string(threshold) + ": must be a ratio in (0, 1]");
  }
  if (detection_time < kMinDetectionTime || detection_time > kMaxDetectionTime) {
    return MakeError(EINVAL, "--storm.detection-time=" + Millis(detection_time) + ": must be " +
                                 Millis(kMinDetectionTime) + ".." + Millis(kMaxDetectionTime));
  }
  const std::chrono::milliseconds restoration = restoration_time.value_or(2 * detection_time);
  if (restoration < kMinRestorationTime || restoration > kMaxRestorationTime) {
    return MakeError(EINVAL, "--storm.restoration-time=" + Millis(restoration) + ": must be " +
                                 Millis(kMinRestorationTime) + ".." + Millis(kMaxRestorationTime));
  }
  return StormConfig{threshold, detection_time, restoration};
}

StormDetector::Transition StormDetector::Observe(const StormInterval& interval,
                                                 const StormConfig& config) {
  if (interval.end <= interval.start) return Transition::kNone;
  if (interval.verdict == StormVerdict::kTailCondition && !interval.ground_truth_event &&
      !stormed_) {
    // A storm that began inside the interval started at the latest `tail` before its end: credit
    // the onset from there, so the next interval (a short one) can complete the detection time.
    // The tail alone never declares: the pause may have ended before the read.
    condition_since_ = std::max(interval.start, interval.end - interval.tail);
    tail_candidate_ = true;
    return Transition::kNone;
  }
  // While stormed, a tail interval counts as clear, as any interval short of the condition does.
  const bool condition =
      interval.ground_truth_event || interval.verdict == StormVerdict::kCondition;

  if (!condition && interval.verdict == StormVerdict::kUnknown) {
    // Continuity is not proven across an unknown interval: neither a detection run nor a
    // restoration run may span it. This delays both edges rather than inventing one.
    condition_since_.reset();
    clear_since_.reset();
    return Transition::kNone;
  }

  if (!stormed_) {
    if (!condition) {
      condition_since_.reset();
      return Transition::kNone;
    }
    if (!condition_since_) condition_since_ = interval.start;
    tail_candidate_ = false;
    // The NIC's stall detector is ground truth: it needs no confirmation time.
    if (!interval.ground_truth_event && interval.end - *condition_since_ < config.detection_time) {
      return Transition::kNone;
    }
    stormed_ = true;
    ++episodes_;
    onset_ = *condition_since_;
    last_condition_end_ = interval.end;
    clear_since_.reset();
    return Transition::kStarted;
  }

  if (condition) {
    clear_since_.reset();
    last_condition_end_ = interval.end;
    return Transition::kNone;
  }
  if (!clear_since_) clear_since_ = interval.start;
  if (interval.end - *clear_since_ < config.restoration_time) return Transition::kNone;
  stormed_ = false;
  last_episode_duration_ = last_condition_end_ - onset_;
  condition_since_.reset();
  clear_since_.reset();
  return Transition::kRestored;
}

}  // namespace roceqos
