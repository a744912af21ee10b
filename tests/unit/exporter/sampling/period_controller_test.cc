#include "exporter/sampling/period_controller.h"

#include <gtest/gtest.h>

namespace roceqos {
namespace {

using std::chrono::milliseconds;

TEST(PeriodController, OverrunDoublesThePeriodUpToTheCap) {
  PeriodController c(milliseconds(250), 0.5, milliseconds(1000));
  EXPECT_FALSE(c.Record(milliseconds(125)));  // exactly the budget is not an overrun
  EXPECT_EQ(c.effective(), milliseconds(250));
  EXPECT_TRUE(c.Record(milliseconds(126)));
  EXPECT_EQ(c.effective(), milliseconds(500));
  EXPECT_TRUE(c.Record(milliseconds(400)));
  EXPECT_EQ(c.effective(), milliseconds(1000));
  EXPECT_TRUE(c.Record(milliseconds(900)));
  EXPECT_EQ(c.effective(), milliseconds(1000)) << "never beyond the cap";
  EXPECT_EQ(c.overruns(), 3u);
}

TEST(PeriodController, RecoversOneHalvingAfterEnoughCalmSamples) {
  PeriodController c(milliseconds(250), 0.5, milliseconds(4000));
  ASSERT_TRUE(c.Record(milliseconds(300)));
  ASSERT_TRUE(c.Record(milliseconds(300)));
  ASSERT_EQ(c.effective(), milliseconds(1000));
  // Calm means cost <= budget * period / 4 = 125ms at 1s.
  for (int i = 0; i < PeriodController::kCalmSamples - 1; ++i) {
    EXPECT_FALSE(c.Record(milliseconds(100)));
    EXPECT_EQ(c.effective(), milliseconds(1000));
  }
  EXPECT_FALSE(c.Record(milliseconds(100)));
  EXPECT_EQ(c.effective(), milliseconds(500));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(c.Record(milliseconds(10)));
  EXPECT_EQ(c.effective(), milliseconds(250)) << "never below the configured period";
}

TEST(PeriodController, SteadyLoadInTheHysteresisBandDoesNotOscillate) {
  PeriodController c(milliseconds(250), 0.5, milliseconds(4000));
  // 100ms per sample: over the 125ms budget? no; but over budget at 250ms only when > 125ms.
  // Use 150ms: overrun at 250ms, fits at 500ms (250ms budget) but is not calm there (> 62.5ms).
  ASSERT_TRUE(c.Record(milliseconds(150)));
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(c.Record(milliseconds(150)));
    ASSERT_EQ(c.effective(), milliseconds(500));
  }
  EXPECT_EQ(c.overruns(), 1u);
}

TEST(PeriodController, ANonCalmSampleRestartsTheRecoveryCount) {
  PeriodController c(milliseconds(250), 0.5, milliseconds(4000));
  ASSERT_TRUE(c.Record(milliseconds(200)));  // -> 500ms, calm threshold 62.5ms
  for (int i = 0; i < PeriodController::kCalmSamples - 1; ++i) c.Record(milliseconds(10));
  c.Record(milliseconds(100));  // within budget, not calm
  for (int i = 0; i < PeriodController::kCalmSamples - 1; ++i) c.Record(milliseconds(10));
  EXPECT_EQ(c.effective(), milliseconds(500));
  c.Record(milliseconds(10));
  EXPECT_EQ(c.effective(), milliseconds(250));
}

}  // namespace
}  // namespace roceqos
