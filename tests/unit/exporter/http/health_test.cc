#include "exporter/http/health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>

#include "exporter/sampling/sampler.h"
#include "tests/unit/support/fake_sources.h"

namespace roceqos {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr nanoseconds kBound = seconds(30);
const steady_clock::time_point kStart = steady_clock::time_point(seconds(5000));

// A 503 body is the reason plus one newline: the reason itself must be a single line.
void ExpectUnhealthy(const HealthVerdict& v, const std::string& mentions) {
  EXPECT_FALSE(v.healthy);
  EXPECT_THAT(v.reason, HasSubstr(mentions));
  EXPECT_THAT(v.reason, Not(HasSubstr("\n")));
}

TEST(Health, DefaultBoundIsTwiceTheBackedOffPeriodAndAtLeast30s) {
  // The sampler backs off to 16 periods under load; the bound must outlast two of those.
  EXPECT_EQ(DefaultHealthMaxSampleAge(milliseconds(10)), seconds(30));
  EXPECT_EQ(DefaultHealthMaxSampleAge(milliseconds(250)), seconds(30));  // the default period
  EXPECT_EQ(DefaultHealthMaxSampleAge(seconds(1)), seconds(32));
  EXPECT_EQ(DefaultHealthMaxSampleAge(seconds(10)), seconds(320));
  for (nanoseconds period : std::initializer_list<nanoseconds>{milliseconds(10), milliseconds(250),
                                                               seconds(1), seconds(60)}) {
    EXPECT_GE(DefaultHealthMaxSampleAge(period), 2 * kDefaultMaxPeriodFactor * period);
  }
}

TEST(Health, StartupGraceIsTwoMinutesOrTheBoundIfLonger) {
  EXPECT_EQ(HealthStartupGrace(seconds(30)), seconds(120));
  EXPECT_EQ(HealthStartupGrace(seconds(320)), seconds(320));
}

TEST(Health, BeforeTheFirstSampleHealthyOnlyWithinTheGrace) {
  EXPECT_TRUE(JudgeHealth(kBound, std::nullopt, kStart, kStart).healthy);
  // Past the bound but within the grace: a slow first sample is not a stuck sampler.
  EXPECT_TRUE(JudgeHealth(kBound, std::nullopt, kStart, kStart + seconds(90)).healthy);
  EXPECT_TRUE(JudgeHealth(kBound, std::nullopt, kStart, kStart + seconds(120)).healthy);
  HealthVerdict late =
      JudgeHealth(kBound, std::nullopt, kStart, kStart + seconds(120) + milliseconds(1));
  ExpectUnhealthy(late, "no sample published 2m1ms after start");
  EXPECT_THAT(late.reason, HasSubstr("start-up grace 2m"));
}

TEST(Health, AfterASampleHealthyWhileItIsYoungerThanTheBound) {
  const steady_clock::time_point sampled = kStart + seconds(200);
  EXPECT_TRUE(JudgeHealth(kBound, sampled, kStart, sampled).healthy);
  EXPECT_TRUE(JudgeHealth(kBound, sampled, kStart, sampled + kBound).healthy);
  HealthVerdict stale = JudgeHealth(kBound, sampled, kStart, sampled + seconds(45));
  ExpectUnhealthy(stale, "no sample for 45s");
  EXPECT_THAT(stale.reason, HasSubstr("--web.health-max-sample-age 30s"));
  // The grace is over once a sample exists: an old first sample fails like any other.
  ExpectUnhealthy(JudgeHealth(kBound, kStart + seconds(1), kStart, kStart + seconds(60)),
                  "no sample for 59s");
}

TEST(Health, ASampleStampedAfterTheProbeReadTheClockIsFresh) {
  // The route reads `now` after Latest(); a publish in between must not read as a negative age.
  EXPECT_TRUE(JudgeHealth(kBound, kStart + seconds(10), kStart, kStart + seconds(9)).healthy);
}

TEST(Health, TheSamplersStampIsTheSteadyClockOfThePublish) {
  // What the route feeds JudgeHealth: taken_at_steady of the published snapshot, on the real
  // steady clock even when the sampler runs on an injected clock.
  testing::FakeClock clock;
  SamplerSources sources;
  sources.inventory = std::make_unique<testing::FakeInventory>();
  sources.ethtool = std::make_unique<testing::FakeEthtool>();
  sources.open_rdma = []() -> Result<std::unique_ptr<RdmaCollector>> {
    return MakeError(EPROTONOSUPPORT, "no RDMA in this test");
  };
  sources.selected_by_default = [](const Device&) { return true; };
  Sampler sampler(SamplerOptions{}, std::move(sources), clock.AsClock());
  const steady_clock::time_point before = steady_clock::now();
  sampler.SampleOnce();
  const steady_clock::time_point after = steady_clock::now();
  std::shared_ptr<const Snapshot> latest = sampler.Latest();
  ASSERT_NE(latest, nullptr);
  EXPECT_GE(latest->taken_at_steady, before);
  EXPECT_LE(latest->taken_at_steady, after);
  EXPECT_TRUE(JudgeHealth(kBound, latest->taken_at_steady, before, after).healthy);
  ExpectUnhealthy(
      JudgeHealth(kBound, latest->taken_at_steady, before, after + kBound + milliseconds(1)),
      "the sampler has published no sample");
}

TEST(Health, AReplacedLldpdSocketIsUnhealthyAStoppedLldpdIsNot) {
  EXPECT_TRUE(JudgeLldpSocket(nullptr).healthy) << "LLDP off or before its first round";
  LldpState state;
  state.view = lldp::LldpdView{};
  EXPECT_TRUE(JudgeLldpSocket(&state).healthy);
  state.view.reset();
  for (LldpAbsence other : {LldpAbsence::kLldpdNotRunning, LldpAbsence::kLldpdNotInstalled,
                            LldpAbsence::kPermissionDenied, LldpAbsence::kLldpdError}) {
    state.failure = other;
    EXPECT_TRUE(JudgeLldpSocket(&state).healthy) << LldpAbsenceName(other);
  }
  state.failure = LldpAbsence::kLldpdSocketStale;
  state.failure_message = "connect /run/lldpd.socket: Connection refused";
  ExpectUnhealthy(JudgeLldpSocket(&state), "lldpd's control socket was replaced");
  EXPECT_THAT(JudgeLldpSocket(&state).reason, HasSubstr("Connection refused"));
}

}  // namespace
}  // namespace roceqos
