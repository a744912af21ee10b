#include "exporter/sampling/port_scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace roceqos {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using Duration = PortScheduler::Duration;

constexpr Duration kCost = milliseconds(2);
// One RDMA STAT_GET: QUERY_Q_COUNTER and the congestion counters, about a tenth of GSTATS' firmware
// commands (simnic models it so).
constexpr int kRdmaCostDivisor = 10;

// The daemon's defaults: 250 ms, idle floor 1 s, duty cycle 2 %.
PortScheduler Defaults() { return PortScheduler({milliseconds(250), milliseconds(1000), 0.02}); }

std::vector<std::string> Ports(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("sim" + std::to_string(i));
  return out;
}

// Simulates the sampler's wakes: at each NextDue() it reads the due ports (each `cost`, moving
// or not) and returns the kernel time per second and the number of wakes over `span`.
struct Simulation {
  double duty = 0;
  int wakes = 0;
  Duration longest_gap{};  // the longest time a port went unread
};

Simulation Simulate(PortScheduler& s, const std::vector<std::string>& ports, bool moving,
                    Duration span, Duration cost = kCost) {
  Simulation out;
  std::map<std::string, Duration> last;
  Duration now{};
  Duration kernel{};
  while (now < span) {
    for (const std::string& port : ports) {
      if (!s.EthtoolDue(port, now)) continue;
      if (last.count(port)) out.longest_gap = std::max(out.longest_gap, now - last[port]);
      last[port] = now;
      kernel += cost;
      if (s.RdmaDue(port, now, moving)) {
        s.RecordRdma(port, now, cost / kRdmaCostDivisor, moving);
        kernel += cost / kRdmaCostDivisor;
      }
      s.RecordEthtool(port, now, cost, moving);
    }
    s.EndWake(now);
    ++out.wakes;
    now = *s.NextDue();
  }
  out.duty = static_cast<double>(kernel.count()) / static_cast<double>(span.count());
  return out;
}

TEST(PortSchedulerTest, EightIdlePortsAtTwoMillisecondsStayUnderOnePercent) {
  PortScheduler s = Defaults();
  const auto ports = Ports(8);
  s.Retain(ports);
  // The first read of each port (and its RDMA) is a fixed cost: measure past the first minute.
  (void)Simulate(s, ports, false, std::chrono::seconds(60));
  PortScheduler steady = Defaults();
  steady.Retain(ports);
  Simulation sim = Simulate(steady, ports, false, std::chrono::seconds(600));
  EXPECT_LE(sim.duty, 0.01);
  EXPECT_GT(sim.duty, 0.008) << "the schedule uses its share, it does not read needlessly rarely";
  EXPECT_GE(steady.IdlePeriod(), milliseconds(1680));
  EXPECT_LE(sim.longest_gap, milliseconds(1800)) << "idle storm: period + follow-up < 2 s";
  // All idle ports are read in one wake: about one wake per idle period.
  EXPECT_LE(sim.wakes, 600 * 1000 / 1680 + 2);
}

TEST(PortSchedulerTest, EightMovingPortsAtTwoMillisecondsStayUnderTwoPercent) {
  PortScheduler s = Defaults();
  const auto ports = Ports(8);
  s.Retain(ports);
  Simulation sim = Simulate(s, ports, true, std::chrono::seconds(600));
  EXPECT_LE(sim.duty, 0.02);
  EXPECT_LE(sim.longest_gap, milliseconds(880)) << "busy storm: period + 100 ms follow-up < 1 s";
  EXPECT_LE(sim.wakes, 600 * 1000 / 840 + 2);
}

TEST(PortSchedulerTest, CheapReadsUseTheFloors) {
  PortScheduler s = Defaults();
  const auto ports = Ports(8);
  s.Retain(ports);
  (void)Simulate(s, ports, false, std::chrono::seconds(10), std::chrono::microseconds(500));
  EXPECT_EQ(s.IdlePeriod(), milliseconds(1000));
  (void)Simulate(s, ports, true, std::chrono::seconds(10), std::chrono::microseconds(100));
  EXPECT_EQ(s.ActivePeriod(), milliseconds(250));
}

TEST(PortSchedulerTest, SlowReadsStretchThePeriodsToKeepTheDutyCycle) {
  PortScheduler s = Defaults();
  const auto ports = Ports(8);
  s.Retain(ports);
  EXPECT_LE(Simulate(s, ports, false, std::chrono::seconds(600), milliseconds(5)).duty, 0.0105);
  EXPECT_LE(Simulate(s, ports, true, std::chrono::seconds(600), milliseconds(5)).duty, 0.02);
}

TEST(PortSchedulerTest, AMovingPortJoinsTheFastClassAndAnIdleOneLeavesIt) {
  PortScheduler s = Defaults();
  s.Retain(Ports(2));
  s.RecordEthtool("sim0", Duration{}, kCost, false);
  s.RecordEthtool("sim1", Duration{}, kCost, true);
  s.EndWake(Duration{});
  const Duration active = s.ActivePeriod();
  EXPECT_LT(active, s.IdlePeriod());
  EXPECT_FALSE(s.EthtoolDue("sim1", active - nanoseconds(1)));
  EXPECT_TRUE(s.EthtoolDue("sim1", active));
  EXPECT_FALSE(s.EthtoolDue("sim0", active)) << "idle: read with the idle class";
  EXPECT_TRUE(s.EthtoolDue("sim0", s.IdlePeriod()));
  EXPECT_EQ(s.NextDue(), active);
}

TEST(PortSchedulerTest, UrgentPortIsReadThenAloneAndAFailedFollowUpExpires) {
  PortScheduler s = Defaults();
  s.Retain(Ports(2));
  s.RecordEthtool("sim0", Duration{}, kCost, false);
  s.RecordEthtool("sim1", Duration{}, kCost, false);
  s.EndWake(Duration{});
  s.Urgent("sim0", milliseconds(100));
  EXPECT_EQ(s.NextDue(), milliseconds(100));
  EXPECT_TRUE(s.EthtoolDue("sim0", milliseconds(100)));
  EXPECT_FALSE(s.EthtoolDue("sim1", milliseconds(100)));
  // The read failed (no RecordEthtool): the wake ends, the request does not linger.
  s.EndWake(milliseconds(100));
  EXPECT_FALSE(s.AnyDue(milliseconds(101)));
  EXPECT_GT(*s.NextDue(), milliseconds(100));
}

TEST(PortSchedulerTest, RdmaIsReadEveryFewSecondsWhileMovingAndOnceWhenItStops) {
  PortScheduler s = Defaults();
  s.Retain(Ports(1));
  ASSERT_TRUE(s.RdmaDue("sim0", Duration{}, true)) << "first read";
  s.RecordRdma("sim0", Duration{}, kCost, false);
  s.RecordEthtool("sim0", Duration{}, kCost, true);
  EXPECT_FALSE(s.RdmaDue("sim0", milliseconds(900), true));
  s.RecordEthtool("sim0", milliseconds(900), kCost, true);
  EXPECT_TRUE(s.RdmaDue("sim0", PortScheduler::kRdmaActivePeriod, true));
  EXPECT_TRUE(s.RdmaDue("sim0", milliseconds(1800), false)) << "stopped moving: the resting values";
  s.RecordRdma("sim0", milliseconds(1800), kCost, false);
  s.RecordEthtool("sim0", milliseconds(1800), kCost, false);
  EXPECT_FALSE(s.RdmaDue("sim0", milliseconds(3600), false)) << "idle";
  EXPECT_TRUE(s.RdmaDue("sim0", milliseconds(1800) + PortScheduler::kRdmaRefresh, false));
}

TEST(PortSchedulerTest, MovingRdmaCountersKeepThePortInTheFastClass) {
  PortScheduler s = Defaults();
  s.Retain(Ports(1));
  s.RecordRdma("sim0", Duration{}, kCost, true);  // CNPs, with the ethtool counters still
  s.RecordEthtool("sim0", Duration{}, kCost, false);
  s.EndWake(Duration{});
  EXPECT_EQ(s.NextDue(), s.ActivePeriod());
  EXPECT_LT(s.ActivePeriod(), s.IdlePeriod());
  EXPECT_TRUE(s.RdmaDue("sim0", PortScheduler::kRdmaActivePeriod, false))
      << "read again while they move";
  s.RecordRdma("sim0", PortScheduler::kRdmaActivePeriod, kCost, false);
  s.RecordEthtool("sim0", PortScheduler::kRdmaActivePeriod, kCost, false);
  s.EndWake(PortScheduler::kRdmaActivePeriod);
  EXPECT_EQ(s.NextDue(), PortScheduler::kRdmaActivePeriod + s.IdlePeriod()) << "at rest: idle";
}

TEST(PortSchedulerTest, AReadThatWaitedForALockDoesNotStretchThePeriods) {
  PortScheduler s = Defaults();
  const auto ports = Ports(8);
  s.Retain(ports);
  (void)Simulate(s, ports, false, std::chrono::seconds(30));
  const Duration before = s.IdlePeriod();
  // Someone else's 2.5 s DCB write held RTNL: three reads waited behind it.
  for (int i = 0; i < 3; ++i)
    s.RecordEthtool("sim0", std::chrono::seconds(31), milliseconds(2500), false);
  EXPECT_EQ(s.IdlePeriod(), before);
}

TEST(PortSchedulerTest, PeriodsStopAtTheLongestSamplerPeriod) {
  const auto ports = Ports(8);
  for (const bool moving : {false, true}) {
    PortScheduler s = Defaults();  // max_period 4 s
    s.Retain(ports);
    const Simulation sim = Simulate(s, ports, moving, std::chrono::seconds(60), milliseconds(50));
    EXPECT_EQ(moving ? s.ActivePeriod() : s.IdlePeriod(), std::chrono::seconds(4));
    EXPECT_LE(sim.longest_gap, std::chrono::seconds(4)) << "a snapshot at least that often";
  }
}

TEST(PortSchedulerTest, OffOrAfterANotificationEveryPortIsDue) {
  PortScheduler off({milliseconds(250), Duration{}, 0.02});
  off.Retain(Ports(1));
  off.RecordEthtool("sim0", Duration{}, kCost, false);
  off.EndWake(Duration{});
  EXPECT_TRUE(off.EthtoolDue("sim0", milliseconds(1)));
  PortScheduler s = Defaults();
  s.Retain(Ports(1));
  s.RecordEthtool("sim0", Duration{}, kCost, false);
  s.EndWake(Duration{});
  EXPECT_FALSE(s.AnyDue(milliseconds(1)));
  s.ReadAllNext();
  EXPECT_TRUE(s.EthtoolDue("sim0", milliseconds(1)));
  s.EndWake(milliseconds(1));
  EXPECT_FALSE(s.AnyDue(milliseconds(2)));
}

TEST(PortSchedulerTest, WithoutPortsAWakeEveryIdlePeriodStillPublishes) {
  PortScheduler s = Defaults();
  s.EndWake(Duration{});
  EXPECT_FALSE(s.AnyDue(milliseconds(999)));
  EXPECT_EQ(s.NextDue(), milliseconds(1000));
  EXPECT_TRUE(s.AnyDue(milliseconds(1000)));
}

TEST(DutyCycleTest, KernelTimePerSecondOverTheWindow) {
  DutyCycle duty(std::chrono::seconds(10));
  for (int i = 0; i <= 20; ++i) duty.Record(milliseconds(1000 * i), milliseconds(10));
  EXPECT_NEAR(duty.Ratio(std::chrono::seconds(20)), 0.01, 0.0011);
  EXPECT_EQ(DutyCycle().Ratio(std::chrono::seconds(1)), 0);
}

}  // namespace
}  // namespace roceqos
