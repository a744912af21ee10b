#include "exporter/render/scrape_schedule.h"

#include <gtest/gtest.h>

#include <chrono>

namespace roceqos {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Key = ScrapeSchedule::Key;

const ScrapeSchedule::TimePoint kStart{seconds(1000)};
constexpr milliseconds kGap{250};  // the default sample period

ScrapeSchedule::TimePoint At(ScrapeSchedule::Duration offset) { return kStart + offset; }

TEST(ScrapeSchedule, OneScrapePredictsNothing) {
  ScrapeSchedule schedule;
  schedule.Arrived({}, At(milliseconds(0)));
  for (int ms = 0; ms <= 60000; ms += 250) {
    EXPECT_TRUE(schedule.Due(At(milliseconds(ms)), kGap).empty()) << ms;
  }
}

// A 15 s scraper: the snapshots published in the last moments before its next scrape are due,
// the ones long before are not, and once it misses 3 intervals it is gone.
TEST(ScrapeSchedule, ASteadyScraperIsDueOnlyBeforeItsNextScrape) {
  ScrapeSchedule schedule;
  const Key gzip_all{MetricGroups::All(), true};
  schedule.Arrived(gzip_all, At(seconds(0)));
  schedule.Arrived(gzip_all, At(seconds(15)));
  EXPECT_TRUE(schedule.Due(At(seconds(16)), kGap).empty()) << "just after a scrape";
  EXPECT_TRUE(schedule.Due(At(seconds(25)), kGap).empty()) << "well before the next";
  const auto due = schedule.Due(At(milliseconds(29900)), kGap);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0], gzip_all);
  EXPECT_EQ(schedule.Due(At(seconds(31)), kGap).size(), 1u) << "a late scrape stays covered";
  EXPECT_EQ(schedule.Due(At(seconds(59)), kGap).size(), 1u);
  EXPECT_TRUE(schedule.Due(At(seconds(61)), kGap).empty()) << "3 intervals without a scrape";
}

// The snapshot a scrape gets is the last one published before it: one published a whole gap
// before the predicted arrival is still due.
TEST(ScrapeSchedule, TheWindowCoversOneGapBeforeThePrediction) {
  ScrapeSchedule schedule;
  schedule.Arrived({}, At(seconds(0)));
  schedule.Arrived({}, At(seconds(15)));
  const std::chrono::microseconds slack(468750);  // a 32nd of the interval
  EXPECT_EQ(schedule.Due(At(seconds(30) - kGap - slack), kGap).size(), 1u);
  EXPECT_TRUE(schedule.Due(At(seconds(30) - kGap - slack - milliseconds(1)), kGap).empty());
  EXPECT_EQ(schedule.Due(At(seconds(30) - seconds(10) - slack), seconds(10)).size(), 1u)
      << "a long sample period widens the window";
}

// Two Prometheus replicas scraping one target alternate two intervals: both next scrapes are
// predicted.
TEST(ScrapeSchedule, AlternatingIntervalsPredictBothScrapes) {
  ScrapeSchedule schedule;
  for (int round = 0; round < 2; ++round) {
    schedule.Arrived({}, At(seconds(15 * round)));
    schedule.Arrived({}, At(seconds(15 * round + 4)));
  }
  // Last arrival 19 s; intervals 4, 11, 4: predicted at 23 s and at 30 s.
  EXPECT_EQ(schedule.Due(At(milliseconds(22900)), kGap).size(), 1u);
  EXPECT_TRUE(schedule.Due(At(seconds(26)), kGap).empty()) << "between the two";
  EXPECT_EQ(schedule.Due(At(milliseconds(29900)), kGap).size(), 1u);
}

// A client whose intervals vary (here 400 to 550 ms) widens the window by that jitter: a scrape
// 150 ms earlier than predicted still finds its snapshot rendered.
TEST(ScrapeSchedule, JitterWidensTheWindow) {
  ScrapeSchedule schedule;
  schedule.Arrived({}, At(milliseconds(0)));
  schedule.Arrived({}, At(milliseconds(550)));
  schedule.Arrived({}, At(milliseconds(950)));
  schedule.Arrived({}, At(milliseconds(1450)));
  // Predicted at 1950 (+500), 1850 (+400) and 2000 (+550); slack 150 ms, gap 250 ms.
  EXPECT_EQ(schedule.Due(At(milliseconds(1450)), kGap).size(), 1u);
  EXPECT_TRUE(schedule.Due(At(milliseconds(1440)), kGap).empty()) << "before the scrape itself";
}

TEST(ScrapeSchedule, ScrapesOfOneRoundAreNotAnInterval) {
  ScrapeSchedule schedule;
  schedule.Arrived({}, At(seconds(0)));
  schedule.Arrived({}, At(seconds(15)));
  schedule.Arrived({}, At(seconds(15) + std::chrono::microseconds(200)));  // a second client
  EXPECT_TRUE(schedule.Due(At(seconds(20)), kGap).empty()) << "still a 15 s scraper";
  EXPECT_EQ(schedule.Due(At(milliseconds(29900)), kGap).size(), 1u);
}

TEST(ScrapeSchedule, SelectionsAndEncodingsAreSeparateScrapers) {
  ScrapeSchedule schedule;
  const Key fast{*MetricGroups::Named("ethtool"), true};
  const Key slow{*MetricGroups::Named("qos"), true};
  schedule.Arrived(fast, At(seconds(0)));
  schedule.Arrived(slow, At(seconds(0)));
  schedule.Arrived(fast, At(seconds(15)));
  auto due = schedule.Due(At(milliseconds(29900)), kGap);
  ASSERT_EQ(due.size(), 1u) << "the 1 min job has no interval yet";
  EXPECT_EQ(due[0], fast);
  schedule.Arrived(fast, At(seconds(30)));
  schedule.Arrived(fast, At(seconds(45)));
  schedule.Arrived(slow, At(seconds(60)));
  schedule.Arrived(fast, At(seconds(60)));
  due = schedule.Due(At(milliseconds(74900)), kGap);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0], fast);
  due = schedule.Due(At(milliseconds(119900)), kGap);
  ASSERT_EQ(due.size(), 1u) << "the 15 s job stopped at 60 s, the 1 min job is due";
  EXPECT_EQ(due[0], slow);
}

TEST(ScrapeSchedule, TheScraperSeenLongestAgoMakesRoom) {
  ScrapeSchedule schedule;
  for (uint32_t i = 0; i < 20; ++i) {
    schedule.Arrived({*MetricGroups::Named(kMetricGroupNames[i % 9]), i >= 9}, At(seconds(i)));
  }
  EXPECT_LE(schedule.size(), 8u);
}

}  // namespace
}  // namespace roceqos
