#include "exporter/signals/storm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

namespace roceqos {
namespace {

using std::chrono::milliseconds;
using Transition = StormDetector::Transition;

constexpr StormVerdict kStorm = StormVerdict::kCondition;
constexpr StormVerdict kClear = StormVerdict::kClear;
constexpr StormVerdict kUnknown = StormVerdict::kUnknown;

// Drives one detector with back-to-back intervals of a fixed length, starting at t = 0.
class Driver {
 public:
  explicit Driver(StormConfig config, milliseconds step = milliseconds(50))
      : config_(config), step_(step) {}

  Transition Next(StormVerdict verdict, bool event = false) {
    const SampleTime start = now_;
    now_ += step_;
    return detector_.Observe({start, now_, verdict, event}, config_);
  }
  // Feeds `count` intervals and returns how many transitions of each kind happened.
  std::pair<int, int> Run(int count, StormVerdict verdict) {
    int started = 0, restored = 0;
    for (int i = 0; i < count; ++i) {
      Transition t = Next(verdict);
      started += t == Transition::kStarted;
      restored += t == Transition::kRestored;
    }
    return {started, restored};
  }

  const StormDetector& detector() const { return detector_; }
  SampleTime now() const { return now_; }

 private:
  StormConfig config_;
  milliseconds step_;
  SampleTime now_{};
  StormDetector detector_;
};

StormConfig Config(int detection_ms = 200, int restoration_ms = 400) {
  return StormConfig{0.8, milliseconds(detection_ms), milliseconds(restoration_ms)};
}

TEST(StormConfigTest, RestorationDefaultsToTwiceDetection) {
  auto config = MakeStormConfig(0.8, milliseconds(300), std::nullopt);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->restoration_time, milliseconds(600));
  EXPECT_EQ(config->detection_time, milliseconds(300));
  EXPECT_DOUBLE_EQ(config->threshold, 0.8);
}

TEST(StormConfigTest, AcceptsSonicRangeBoundaries) {
  EXPECT_TRUE(MakeStormConfig(0.8, milliseconds(100), milliseconds(100)).ok());
  EXPECT_TRUE(MakeStormConfig(1.0, milliseconds(5000), milliseconds(60000)).ok());
}

TEST(StormConfigTest, RejectsDetectionOutsideRange) {
  auto low = MakeStormConfig(0.8, milliseconds(99), milliseconds(400));
  ASSERT_FALSE(low.ok());
  EXPECT_NE(low.error().message.find("--storm.detection-time=99ms"), std::string::npos);
  EXPECT_FALSE(MakeStormConfig(0.8, milliseconds(5001), milliseconds(400)).ok());
}

TEST(StormConfigTest, RejectsRestorationOutsideRange) {
  auto low = MakeStormConfig(0.8, milliseconds(200), milliseconds(99));
  ASSERT_FALSE(low.ok());
  EXPECT_NE(low.error().message.find("--storm.restoration-time"), std::string::npos);
  EXPECT_FALSE(MakeStormConfig(0.8, milliseconds(200), milliseconds(60001)).ok());
  // The default (2 x detection) is validated too: 2 x 5000 ms is fine, it is within 60 s.
  EXPECT_TRUE(MakeStormConfig(0.8, milliseconds(5000), std::nullopt).ok());
}

TEST(StormConfigTest, RejectsThresholdOutsideUnitInterval) {
  EXPECT_FALSE(MakeStormConfig(0.0, milliseconds(200), std::nullopt).ok());
  EXPECT_FALSE(MakeStormConfig(-0.1, milliseconds(200), std::nullopt).ok());
  EXPECT_FALSE(MakeStormConfig(1.01, milliseconds(200), std::nullopt).ok());
  EXPECT_FALSE(MakeStormConfig(std::nan(""), milliseconds(200), std::nullopt).ok());
  auto bad = MakeStormConfig(2.0, milliseconds(200), std::nullopt);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--storm.threshold"), std::string::npos);
}

TEST(StormDetectorTest, DetectsExactlyWhenConditionHeldForDetectionTime) {
  Driver d(Config(200));
  EXPECT_EQ(d.Next(kStorm), Transition::kNone);  // held 50 ms
  EXPECT_EQ(d.Next(kStorm), Transition::kNone);  // 100 ms
  EXPECT_EQ(d.Next(kStorm), Transition::kNone);  // 150 ms
  EXPECT_FALSE(d.detector().stormed());
  EXPECT_EQ(d.Next(kStorm), Transition::kStarted);  // exactly 200 ms
  EXPECT_TRUE(d.detector().stormed());
  EXPECT_EQ(d.detector().episodes(), 1u);
  EXPECT_EQ(d.detector().onset(), SampleTime(0));
}

TEST(StormDetectorTest, OneIntervalLongerThanDetectionTimeDetectsAtOnce) {
  // Sampling every 250 ms with a 200 ms detection time: one full interval is enough.
  Driver d(Config(200), milliseconds(250));
  EXPECT_EQ(d.Next(kStorm), Transition::kStarted);
}

TEST(StormDetectorTest, FlappingBelowDetectionTimeNeverStorms) {
  Driver d(Config(200));
  for (int cycle = 0; cycle < 50; ++cycle) {
    EXPECT_EQ(d.Run(3, kStorm).first, 0);  // 150 ms of condition
    d.Next(kClear);                        // broken by one clear interval
  }
  EXPECT_FALSE(d.detector().stormed());
  EXPECT_EQ(d.detector().episodes(), 0u);
}

TEST(StormDetectorTest, UnknownIntervalBreaksDetectionRun) {
  Driver d(Config(200));
  d.Run(3, kStorm);
  d.Next(kUnknown);
  EXPECT_EQ(d.Run(3, kStorm).first, 0);
  EXPECT_FALSE(d.detector().stormed());
  EXPECT_EQ(d.Next(kStorm), Transition::kStarted);  // 200 ms after the unknown interval
}

TEST(StormDetectorTest, RestorationNeedsFullRestorationTimeClear) {
  Driver d(Config(200, 400));
  d.Run(4, kStorm);
  ASSERT_TRUE(d.detector().stormed());
  // 350 ms clear, then the condition returns: still the same storm, restoration restarts.
  EXPECT_EQ(d.Run(7, kClear).second, 0);
  EXPECT_EQ(d.Next(kStorm), Transition::kNone);
  EXPECT_TRUE(d.detector().stormed());
  EXPECT_EQ(d.detector().episodes(), 1u);
  // Now 400 ms clear: restored exactly at the boundary, not one interval earlier.
  EXPECT_EQ(d.Run(7, kClear).second, 0);
  EXPECT_TRUE(d.detector().stormed());
  EXPECT_EQ(d.Next(kClear), Transition::kRestored);
  EXPECT_FALSE(d.detector().stormed());
  EXPECT_EQ(d.detector().episodes(), 1u);
  // Onset 0 ms, last condition interval ended at 200 + 350 + 50 = 600 ms.
  ASSERT_TRUE(d.detector().last_episode_duration().has_value());
  EXPECT_EQ(*d.detector().last_episode_duration(), milliseconds(600));
}

TEST(StormDetectorTest, UnknownIntervalDelaysRestoration) {
  Driver d(Config(200, 400));
  d.Run(4, kStorm);
  d.Run(7, kClear);
  d.Next(kUnknown);
  EXPECT_EQ(d.Run(7, kClear).second, 0);
  EXPECT_TRUE(d.detector().stormed());
  EXPECT_EQ(d.Next(kClear), Transition::kRestored);
  EXPECT_EQ(*d.detector().last_episode_duration(), milliseconds(200));
}

TEST(StormDetectorTest, GroundTruthEventStormsImmediately) {
  Driver d(Config(200, 400));
  d.Run(2, kClear);
  EXPECT_EQ(d.Next(kClear, /*event=*/true), Transition::kStarted);
  EXPECT_TRUE(d.detector().stormed());
  EXPECT_EQ(d.detector().onset(), SampleTime(milliseconds(100)));
  // No condition afterwards: restored after the restoration time.
  EXPECT_EQ(d.Run(8, kClear).second, 1);
  EXPECT_FALSE(d.detector().stormed());
  EXPECT_EQ(*d.detector().last_episode_duration(), milliseconds(50));
}

TEST(StormDetectorTest, GroundTruthEventCountsEvenInUnknownInterval) {
  Driver d(Config(200, 400));
  EXPECT_EQ(d.Next(kUnknown, /*event=*/true), Transition::kStarted);
}

TEST(StormDetectorTest, GroundTruthEventDuringStormExtendsIt) {
  Driver d(Config(200, 400));
  d.Run(4, kStorm);
  d.Run(7, kClear);
  EXPECT_EQ(d.Next(kClear, /*event=*/true), Transition::kNone);
  EXPECT_EQ(d.Run(7, kClear).second, 0);
  EXPECT_EQ(d.Next(kClear), Transition::kRestored);
  EXPECT_EQ(d.detector().episodes(), 1u);
}

TEST(StormDetectorTest, CountsSeparateEpisodes) {
  Driver d(Config(200, 400));
  for (int episode = 1; episode <= 3; ++episode) {
    EXPECT_EQ(d.Run(4, kStorm).first, 1);
    EXPECT_EQ(d.Run(8, kClear).second, 1);
    EXPECT_EQ(d.detector().episodes(), static_cast<uint64_t>(episode));
  }
}

TEST(StormDetectorTest, DetectionIsDueOnlyWhileARunIsUnderWay) {
  Driver d(Config(200));
  EXPECT_EQ(d.detector().detection_due(Config(200)), std::nullopt);
  d.Next(kClear);
  EXPECT_EQ(d.detector().detection_due(Config(200)), std::nullopt);
  d.Next(kStorm);  // run from 50 ms
  EXPECT_EQ(d.detector().detection_due(Config(200)), SampleTime(milliseconds(250)));
  d.Run(3, kStorm);  // 200 ms held: declared
  ASSERT_TRUE(d.detector().stormed());
  EXPECT_EQ(d.detector().detection_due(Config(200)), std::nullopt) << "nothing left to confirm";
}

TEST(StormDetectorTest, IgnoresEmptyOrBackwardIntervals) {
  StormDetector detector;
  const StormConfig config = Config(200, 400);
  SampleTime t(milliseconds(500));
  EXPECT_EQ(detector.Observe({t, t, kStorm, true}, config), Transition::kNone);
  EXPECT_EQ(detector.Observe({t, t - milliseconds(10), kStorm, true}, config), Transition::kNone);
  EXPECT_FALSE(detector.stormed());
}

// Onset credit from the pause counter's tail (docs/signals.md, "Onset credit").

StormInterval Tail(int start_ms, int end_ms, int tail_ms) {
  StormInterval interval{SampleTime(milliseconds(start_ms)), SampleTime(milliseconds(end_ms)),
                         StormVerdict::kTailCondition, false};
  interval.tail = milliseconds(tail_ms);
  return interval;
}

StormInterval Full(int start_ms, int end_ms, StormVerdict verdict = kStorm) {
  return {SampleTime(milliseconds(start_ms)), SampleTime(milliseconds(end_ms)), verdict, false};
}

TEST(StormTailTest, TailAloneNeverDeclaresButCreditsTheOnset) {
  StormDetector detector;
  EXPECT_EQ(detector.Observe(Tail(0, 1750, 1000), Config()), Transition::kNone)
      << "a full second of pause at the end is still only a candidate";
  EXPECT_FALSE(detector.stormed());
  EXPECT_TRUE(detector.tail_candidate());
  EXPECT_EQ(detector.detection_due(Config()), SampleTime(milliseconds(950)));
}

TEST(StormTailTest, FollowUpConditionDeclaresWithTheCreditedOnset) {
  StormDetector detector;
  (void)detector.Observe(Tail(0, 1750, 150), Config());
  EXPECT_EQ(detector.Observe(Full(1750, 1850), Config()), Transition::kStarted)
      << "150 ms credited + 100 ms >= 200 ms";
  EXPECT_EQ(detector.onset(), SampleTime(milliseconds(1600)));
  EXPECT_FALSE(detector.tail_candidate());
}

TEST(StormTailTest, FollowUpShortOfTheDetectionTimeWaitsForMore) {
  StormDetector detector;
  (void)detector.Observe(Tail(0, 1000, 50), Config());
  EXPECT_EQ(detector.Observe(Full(1000, 1100), Config()), Transition::kNone) << "150 ms < 200";
  EXPECT_FALSE(detector.tail_candidate()) << "the follow-up proved the condition";
  EXPECT_EQ(detector.Observe(Full(1100, 1150), Config()), Transition::kStarted);
  EXPECT_EQ(detector.onset(), SampleTime(milliseconds(950)));
}

TEST(StormTailTest, ClearOrUnknownFollowUpDropsTheCandidate) {
  for (StormVerdict follow_up : {kClear, kUnknown}) {
    StormDetector detector;
    (void)detector.Observe(Tail(0, 1000, 900), Config());
    EXPECT_EQ(detector.Observe(Full(1000, 1100, follow_up), Config()), Transition::kNone);
    EXPECT_EQ(detector.detection_due(Config()), std::nullopt);
    EXPECT_EQ(detector.Observe(Full(1100, 1150), Config()), Transition::kNone)
        << "a new run starts at 1100 ms";
    EXPECT_EQ(detector.episodes(), 0u);
  }
}

TEST(StormTailTest, TailNeverReachesBeforeTheIntervalStart) {
  StormDetector detector;
  (void)detector.Observe(Tail(500, 600, 400), Config());
  EXPECT_EQ(detector.detection_due(Config()), SampleTime(milliseconds(700)));
}

TEST(StormTailTest, WhileStormedATailCountsAsClear) {
  StormDetector detector;
  ASSERT_EQ(detector.Observe(Full(0, 250), Config()), Transition::kStarted);
  EXPECT_EQ(detector.Observe(Tail(250, 500, 100), Config()), Transition::kNone);
  EXPECT_EQ(detector.Observe(Full(500, 650, kClear), Config()), Transition::kRestored)
      << "400 ms short of the condition";
  EXPECT_EQ(detector.last_episode_duration(), SampleTime(milliseconds(250)));
}

}  // namespace
}  // namespace roceqos
