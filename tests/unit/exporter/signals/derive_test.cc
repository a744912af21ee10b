#include "exporter/signals/derive.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "tests/unit/support/ethtool_capture.h"

namespace roceqos {
namespace {

namespace slot = signal_slot;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Direction kRx = Direction::kRx;
constexpr Direction kTx = Direction::kTx;

// A netdev whose counters move like a NIC's; Take() returns the sample at the current time.
class FakePort {
 public:
  FakePort() {
    sample_.identity = {
        .ifindex = 7, .ethtool_generation = 1, .rdma_device_index = 1, .rdma_port = 1};
    sample_.rdma_device = "mlx5_0";
    sample_.rdma_port = 1;
    // PFC on priority 3 only: mlx5 then emits pause counters for priority 3 alone.
    for (Direction d : {kRx, kTx}) {
      sample_.Set(slot::PauseFrames(d, 3), 1000);
      sample_.Set(slot::PauseDurationMicros(d, 3), 5000);
      for (int prio = 0; prio < kNumPriorities; ++prio)
        sample_.Set(slot::PrioPackets(d, prio), 100);
    }
    sample_.Set(slot::kStormWarningEvents, 0);
    sample_.Set(slot::kStormErrorEvents, 0);
    sample_.Set(slot::kNpCnpSent, 50);
    sample_.Set(slot::kNpEcnMarkedRocePackets, 60);
    sample_.Set(slot::kRpCnpHandled, 70);
  }

  void Add(size_t index, uint64_t amount) { sample_.values[index] += amount; }
  void Put(size_t index, uint64_t value) { sample_.values[index] = value; }
  void Remove(size_t index) { sample_.present.reset(index); }
  void Advance(milliseconds step) { sample_.time += step; }
  DeviceSample& sample() { return sample_; }

  // Keeps traffic moving on every priority except where a test says otherwise.
  void Traffic(uint64_t packets = 10) {
    for (Direction d : {kRx, kTx}) {
      for (int prio = 0; prio < kNumPriorities; ++prio) Add(slot::PrioPackets(d, prio), packets);
    }
  }
  // Pauses `direction` on `prio` for `ratio` of the next `step` and holds the opposite traffic.
  void Pause(Direction direction, int prio, double ratio, milliseconds step, uint64_t frames) {
    Add(slot::PauseFrames(direction, prio), frames);
    Add(slot::PauseDurationMicros(direction, prio),
        static_cast<uint64_t>(ratio * static_cast<double>(step.count()) * 1000.0));
  }

 private:
  DeviceSample sample_;
};

class DeriveTest : public ::testing::Test {
 protected:
  DeriveTest() : deriver_(std::make_unique<SignalDeriver>(DeriveConfig{})) {}

  void Reset(DeriveConfig config) { deriver_ = std::make_unique<SignalDeriver>(config); }
  void Feed(const std::string& netdev = "eth0") { deriver_->Observe(netdev, port_.sample()); }
  // Advances by `step` with traffic flowing and feeds the sample.
  void Idle(milliseconds step, int count = 1) {
    for (int i = 0; i < count; ++i) {
      port_.Advance(step);
      port_.Traffic();
      Feed();
    }
  }
  const DeviceSignals& Device(const std::string& netdev = "eth0") {
    signals_ = deriver_->Signals();
    const DeviceSignals* device = signals_.Find(netdev);
    EXPECT_NE(device, nullptr);
    static const DeviceSignals kEmpty;
    return device ? *device : kEmpty;
  }
  static const PauseSignals* Pause(const DeviceSignals& device, int prio, Direction direction) {
    for (const auto& p : device.pause) {
      if (p.prio == prio && p.direction == direction) return &p;
    }
    return nullptr;
  }
  static const StormSignals* Storm(const DeviceSignals& device, int prio, Direction direction) {
    for (const auto& s : device.storms) {
      if (s.prio == prio && s.direction == direction) return &s;
    }
    return nullptr;
  }
  const RoleEcnSignals& Rp(size_t window = 0) {
    rp_ = Device().ecn[window].Role(EcnRole::kReactionPoint);
    return rp_;
  }
  const RoleEcnSignals& Np(size_t window = 0) {
    np_ = Device().ecn[window].Role(EcnRole::kNotificationPoint);
    return np_;
  }
  std::string_view Evidence() { return StormEvidenceName(Device().storm_evidence); }
  bool Stormed(int prio, Direction direction) {
    const StormSignals* storm = Storm(Device(), prio, direction);
    return storm && storm->stormed;
  }

  FakePort port_;
  std::unique_ptr<SignalDeriver> deriver_;
  DerivedSignals signals_;
  RoleEcnSignals rp_, np_;
};

TEST(StepCounterTest, ForwardStepIsTheDifference) {
  auto step = StepCounter(100, 250, 64);
  EXPECT_EQ(step.kind, CounterStep::Kind::kForward);
  EXPECT_EQ(step.delta, 150u);
  EXPECT_EQ(StepCounter(5, 5, 32).delta, 0u);
}

TEST(StepCounterTest, ThirtyTwoBitWrapNearTopIsModular) {
  const uint64_t top = uint64_t{1} << 32;
  auto step = StepCounter(top - 10, 5, 32);
  EXPECT_EQ(step.kind, CounterStep::Kind::kWrapped);
  EXPECT_EQ(step.delta, 15u);
  // The largest modular step still called a wrap is a quarter of the range.
  auto edge = StepCounter(top - 1, top / 4 - 1, 32);
  EXPECT_EQ(edge.kind, CounterStep::Kind::kWrapped);
  EXPECT_EQ(edge.delta, top / 4);
  EXPECT_EQ(StepCounter(top - 1, top / 4, 32).kind, CounterStep::Kind::kReset);
}

TEST(StepCounterTest, BackwardStepAwayFromTopIsReset) {
  EXPECT_EQ(StepCounter(1u << 31, 100, 32).kind, CounterStep::Kind::kReset);
  EXPECT_EQ(StepCounter(500, 100, 32).kind, CounterStep::Kind::kReset);
}

TEST(StepCounterTest, SixtyFourBitCountersNeverWrap) {
  EXPECT_EQ(StepCounter(UINT64_MAX - 1, 3, 64).kind, CounterStep::Kind::kReset);
}

TEST(StepCounterTest, ValueWiderThanDeclaredWidthIsReset) {
  EXPECT_EQ(StepCounter(uint64_t{1} << 40, 3, 32).kind, CounterStep::Kind::kReset);
}

TEST(DeriveConfigTest, SortsAndValidatesWindows) {
  auto config = MakeDeriveConfig({seconds(60), seconds(15)}, StormConfig{});
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->windows, (std::vector<seconds>{seconds(15), seconds(60)}));
  EXPECT_FALSE(MakeDeriveConfig({}, StormConfig{}).ok());
  EXPECT_FALSE(MakeDeriveConfig({seconds(0)}, StormConfig{}).ok());
  EXPECT_FALSE(MakeDeriveConfig({seconds(301)}, StormConfig{}).ok());
  EXPECT_FALSE(MakeDeriveConfig({seconds(15), seconds(15)}, StormConfig{}).ok());
  EXPECT_FALSE(
      MakeDeriveConfig({seconds(1), seconds(2), seconds(3), seconds(4), seconds(5)}, StormConfig{})
          .ok());
}

TEST(DeriveConfigTest, WindowLabelsArePrometheusDurations) {
  EXPECT_EQ(WindowLabel(seconds(15)), "15s");
  EXPECT_EQ(WindowLabel(seconds(60)), "1m");
  EXPECT_EQ(WindowLabel(seconds(90)), "90s");
  EXPECT_EQ(WindowLabel(seconds(300)), "5m");
}

TEST_F(DeriveTest, FirstSampleIsOnlyABaseline) {
  Feed();
  const DeviceSignals& device = Device();
  const PauseSignals* pause = Pause(device, 3, kRx);
  ASSERT_NE(pause, nullptr);
  EXPECT_EQ(pause->rate_peak[0], 0.0);
  EXPECT_EQ(pause->paused_ratio_peak[0], 0.0);
  EXPECT_FALSE(device.ecn[0].Role(EcnRole::kReactionPoint).known);
  EXPECT_FALSE(device.ecn[0].Role(EcnRole::kNotificationPoint).known);
}

TEST_F(DeriveTest, PeakRateAndPausedRatioOverWindow) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Pause(kRx, 3, 0.5, milliseconds(250), 1000);  // 4000 frames/s, half the time paused
  Feed();
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Pause(kRx, 3, 0.1, milliseconds(250), 100);
  Feed();
  const PauseSignals* pause = Pause(Device(), 3, kRx);
  ASSERT_NE(pause, nullptr);
  for (size_t w = 0; w < 2; ++w) {
    EXPECT_DOUBLE_EQ(pause->rate_peak[w], 4000.0);
    EXPECT_NEAR(pause->paused_ratio_peak[w], 0.5, 1e-6);
  }
  const PauseSignals* tx = Pause(Device(), 3, kTx);
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ(tx->rate_peak[0], 0.0);
}

TEST_F(DeriveTest, PausedRatioIsClampedToOne) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Add(slot::PauseDurationMicros(kTx, 3), 300000);  // 300 ms of pause in 250 ms
  Feed();
  EXPECT_DOUBLE_EQ(Pause(Device(), 3, kTx)->paused_ratio_peak[0], 1.0);
}

TEST_F(DeriveTest, OnlyPrioritiesWithPauseCountersArePublished) {
  Feed();
  const DeviceSignals& device = Device();
  ASSERT_EQ(device.pause.size(), 2u);
  EXPECT_EQ(Pause(device, 0, kRx), nullptr);
  // When PFC is disabled on priority 3 its counters vanish, and so do the series.
  for (Direction d : {kRx, kTx}) {
    port_.Remove(slot::PauseFrames(d, 3));
    port_.Remove(slot::PauseDurationMicros(d, 3));
  }
  port_.sample().identity.ethtool_generation = 2;
  port_.Advance(milliseconds(250));
  Feed();
  EXPECT_TRUE(Device().pause.empty());
}

TEST_F(DeriveTest, WindowsAgeOutAtTheirLength) {
  Feed();
  port_.Advance(milliseconds(1000));
  port_.Pause(kRx, 3, 0.9, milliseconds(1000), 500);  // interval ending at t = 1 s
  Feed();
  Idle(milliseconds(1000), 15);  // now t = 16 s: the burst's bucket is 15 buckets old
  const PauseSignals* pause = Pause(Device(), 3, kRx);
  EXPECT_DOUBLE_EQ(pause->rate_peak[0], 500.0);  // 15 s window still covers it
  Idle(milliseconds(1000));                      // t = 17 s
  pause = Pause(Device(), 3, kRx);
  EXPECT_DOUBLE_EQ(pause->rate_peak[0], 0.0);
  EXPECT_DOUBLE_EQ(pause->rate_peak[1], 500.0);
  Idle(milliseconds(1000), 45);  // t = 62 s: older than the 1 m window plus the partial second
  EXPECT_DOUBLE_EQ(Pause(Device(), 3, kRx)->rate_peak[1], 0.0);
}

TEST_F(DeriveTest, CounterResetDiscardsIntervalWithoutNegativeRates) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Put(slot::PauseFrames(kRx, 3), 3);  // driver reload without a new ifindex
  Feed();
  const DeviceSignals& device = Device();
  EXPECT_EQ(device.discarded_intervals[static_cast<size_t>(DiscardReason::kCounterReset)], 1u);
  EXPECT_EQ(Pause(device, 3, kRx)->rate_peak[0], 0.0);
  // The reset sample is the new baseline: the next interval counts from 3.
  port_.Advance(milliseconds(250));
  port_.Add(slot::PauseFrames(kRx, 3), 25);
  Feed();
  EXPECT_DOUBLE_EQ(Pause(Device(), 3, kRx)->rate_peak[0], 100.0);
}

TEST_F(DeriveTest, IdentityChangeDiscardsInterval) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.sample().identity.ifindex = 8;
  port_.Add(slot::PauseFrames(kRx, 3), 1000000);
  Feed();
  const DeviceSignals& device = Device();
  EXPECT_EQ(device.discarded_intervals[static_cast<size_t>(DiscardReason::kIdentityChange)], 1u);
  EXPECT_EQ(Pause(device, 3, kRx)->rate_peak[0], 0.0);
}

TEST_F(DeriveTest, RdmaIdentityChangeDropsOnlyTheEcnInputs) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.sample().identity.rdma_device_index = 2;  // mlx5_0 re-created
  port_.Put(slot::kNpEcnMarkedRocePackets, 0);    // with its counters from zero
  port_.Put(slot::kRpCnpHandled, 0);
  port_.Put(slot::kNpCnpSent, 0);
  port_.Pause(kTx, 3, 1.0, milliseconds(250), 100);
  Feed();
  const DeviceSignals& device = Device();
  EXPECT_EQ(device.discarded_intervals, (std::array<uint64_t, kDiscardReasonCount>{}))
      << "the port counters of the interval stay valid";
  EXPECT_DOUBLE_EQ(Pause(device, 3, kTx)->rate_peak[0], 400.0);
  EXPECT_TRUE(Storm(device, 3, kTx)->stormed);
  EXPECT_FALSE(device.ecn[0].Role(EcnRole::kNotificationPoint).known)
      << "no ECN delta across the re-created RDMA device";
}

TEST_F(DeriveTest, SignalsOfOneDevice) {
  Feed("eth0");
  Feed("eth1");
  auto one = deriver_->SignalsOf("eth1");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->netdev, "eth1");
  EXPECT_FALSE(deriver_->SignalsOf("eth9").has_value());
}

TEST_F(DeriveTest, NonIncreasingTimeDiscardsInterval) {
  Feed();
  port_.Add(slot::PauseFrames(kRx, 3), 10);
  Feed();
  const DeviceSignals& device = Device();
  EXPECT_EQ(device.discarded_intervals[static_cast<size_t>(DiscardReason::kClock)], 1u);
  EXPECT_EQ(Pause(device, 3, kRx)->rate_peak[0], 0.0);
}

TEST_F(DeriveTest, ImplausibleJumpDiscardsInterval) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Add(slot::PauseFrames(kRx, 3), uint64_t{1} << 40);  // 4.4e12 frames/s
  Feed();
  const DeviceSignals& device = Device();
  EXPECT_EQ(device.discarded_intervals[static_cast<size_t>(DiscardReason::kImplausible)], 1u);
  EXPECT_EQ(Pause(device, 3, kRx)->rate_peak[0], 0.0);
}

TEST_F(DeriveTest, EachRoleComparesItsOwnDirectionWithItsOwnCounter) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Add(slot::PauseFrames(kRx, 3), 30);
  port_.Add(slot::PauseFrames(kTx, 3), 10);
  port_.Add(slot::kNpEcnMarkedRocePackets, 20);
  port_.Add(slot::kRpCnpHandled, 5);
  Feed();
  EXPECT_TRUE(Rp().known);
  EXPECT_EQ(Rp().pause_frames, 30u) << "pause received";
  EXPECT_EQ(Rp().ecn_events, 5u) << "CNPs handled";
  EXPECT_DOUBLE_EQ(Rp().pauses_per_ecn, 6.0);
  EXPECT_TRUE(Np().known);
  EXPECT_EQ(Np().pause_frames, 10u) << "pause sent";
  EXPECT_EQ(Np().ecn_events, 20u) << "ECN-marked packets received";
  EXPECT_DOUBLE_EQ(Np().pauses_per_ecn, 0.5);
  EXPECT_FALSE(Rp().ecn_silent);
  EXPECT_FALSE(Np().ecn_silent);
}

TEST_F(DeriveTest, PausesWithoutEcnAreSilentAndFinite) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Add(slot::PauseFrames(kTx, 3), 40);
  port_.Add(slot::kRpCnpHandled, 3);  // the other role's counter does not hide the silence
  Feed();
  EXPECT_TRUE(Np().known);
  EXPECT_TRUE(Np().ecn_silent);
  EXPECT_TRUE(std::isfinite(Np().pauses_per_ecn));
  EXPECT_DOUBLE_EQ(Np().pauses_per_ecn, 40.0);
  EXPECT_FALSE(Rp().ecn_silent) << "no pause received";
}

TEST_F(DeriveTest, NoPausesNoEcnIsNotSilent) {
  Feed();
  Idle(milliseconds(250));
  for (const RoleEcnSignals& role : {Rp(), Np()}) {
    EXPECT_TRUE(role.known);
    EXPECT_FALSE(role.ecn_silent);
    EXPECT_DOUBLE_EQ(role.pauses_per_ecn, 0.0);
  }
}

TEST_F(DeriveTest, ARoleWithoutItsCounterIsUnknownAndTheOtherIsNot) {
  port_.Remove(slot::kRpCnpHandled);
  Feed();
  port_.Advance(milliseconds(250));
  port_.Add(slot::PauseFrames(kRx, 3), 40);
  Feed();
  EXPECT_FALSE(Rp().known);
  EXPECT_FALSE(Rp().ecn_silent);
  EXPECT_TRUE(Np().known);
}

// Review finding (issue 40): the sampler carries the RDMA counters forward between their reads
// (every 2 s while a port moves), so pauses in the intervals between two reads met an ECN delta of
// zero and read as silent. They wait for the next read now, and are compared with its delta.
TEST_F(DeriveTest, CarriedRdmaCountersAreNotSilence) {
  port_.sample().rdma_read_at = milliseconds(1);
  Feed();
  for (int i = 0; i < 4; ++i) {  // 1 s of pauses, the RDMA counters carried (same read)
    port_.Advance(milliseconds(250));
    port_.Add(slot::PauseFrames(kRx, 3), 10);
    Feed();
    EXPECT_FALSE(Rp().ecn_silent) << "interval " << i;
    EXPECT_FALSE(Rp().known) << "pauses wait for the next RDMA read";
    EXPECT_TRUE(Np().known) << "nothing sent paused: nothing to compare";
  }
  port_.Advance(milliseconds(250));
  port_.Add(slot::PauseFrames(kRx, 3), 10);
  port_.Add(slot::kRpCnpHandled, 25);  // everything since the last read, read now
  port_.sample().rdma_read_at = milliseconds(1251);
  Feed();
  EXPECT_TRUE(Rp().known);
  EXPECT_FALSE(Rp().ecn_silent);
  EXPECT_EQ(Rp().pause_frames, 50u);
  EXPECT_DOUBLE_EQ(Rp().pauses_per_ecn, 2.0);
}

// A window never claims less time than its inputs cover: a span between two RDMA reads with
// pauses in it that is longer than the window leaves the window unknown until it leaves it.
TEST_F(DeriveTest, AWindowShorterThanAPausedSpanIsUnknown) {
  Reset(MakeDeriveConfig({seconds(1), seconds(15)}, StormConfig{}).value());
  port_.sample().rdma_read_at = milliseconds(1);
  Feed();
  for (int i = 0; i < 8; ++i) {  // 2 s of pauses between two RDMA reads
    port_.Advance(milliseconds(250));
    port_.Traffic();
    port_.Add(slot::PauseFrames(kRx, 3), 10);
    Feed();
  }
  port_.sample().rdma_read_at = milliseconds(2001);
  port_.Add(slot::kRpCnpHandled, 4);
  port_.Advance(milliseconds(250));
  port_.Traffic();
  Feed();
  EXPECT_FALSE(Rp(0).known) << "1 s window, 2.25 s span";
  EXPECT_TRUE(Rp(1).known);
  EXPECT_DOUBLE_EQ(Rp(1).pauses_per_ecn, 20.0);
  Idle(milliseconds(250), 8);  // no pause since the read, the RDMA counters carried
  EXPECT_TRUE(Rp(0).known) << "the long span left the 1 s window";
  EXPECT_EQ(Rp(0).pause_frames, 0u);
  EXPECT_FALSE(Rp(0).ecn_silent);
}

TEST_F(DeriveTest, PausesOnLossyPrioritiesDoNotCount) {
  port_.sample().lossless_prios = 0x08;              // PFC on priority 3 only
  port_.sample().Set(slot::PauseFrames(kRx, 5), 0);  // a stray counter on priority 5
  Feed();
  port_.Advance(milliseconds(250));
  port_.Add(slot::PauseFrames(kRx, 5), 100);
  Feed();
  EXPECT_EQ(Rp().pause_frames, 0u);
  EXPECT_FALSE(Rp().ecn_silent);
}

TEST_F(DeriveTest, LosslessPrioritiesAreInferredFromPauseCounters) {
  EXPECT_EQ(port_.sample().LosslessPrios(), 0x08);
  port_.sample().lossless_prios = 0x18;
  EXPECT_EQ(port_.sample().LosslessPrios(), 0x18);
}

TEST_F(DeriveTest, EcnUnknownWithoutRdmaCounters) {
  port_.Remove(slot::kNpEcnMarkedRocePackets);
  port_.Remove(slot::kRpCnpHandled);
  port_.Remove(slot::kNpCnpSent);
  Feed();
  port_.Advance(milliseconds(250));
  port_.Add(slot::PauseFrames(kTx, 3), 40);
  Feed();
  EXPECT_FALSE(Rp().known);
  EXPECT_FALSE(Np().known);
  EXPECT_FALSE(Np().ecn_silent);
  EXPECT_FALSE(Device().ecn[0].cnp_known);
}

TEST_F(DeriveTest, CnpSentAgainstEcnMarked) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Add(slot::kNpEcnMarkedRocePackets, 200);
  port_.Add(slot::kNpCnpSent, 50);
  Feed();
  const EcnWindowSignals& ecn = Device().ecn[1];
  EXPECT_TRUE(ecn.cnp_known);
  EXPECT_EQ(ecn.cnp_sent, 50u);
  EXPECT_EQ(ecn.ecn_marked, 200u);
  EXPECT_DOUBLE_EQ(ecn.cnp_to_ecn_ratio, 0.25);
}

TEST_F(DeriveTest, EcnSumsCoverWholeWindow) {
  Feed();
  for (int i = 0; i < 8; ++i) {  // 2 s of intervals, 10 pauses and 1 mark each
    port_.Advance(milliseconds(250));
    port_.Add(slot::PauseFrames(kRx, 3), 10);
    port_.Add(slot::kRpCnpHandled, 1);
    Feed();
  }
  EXPECT_EQ(Rp().pause_frames, 80u);
  EXPECT_EQ(Rp().ecn_events, 8u);
  EXPECT_DOUBLE_EQ(Rp().pauses_per_ecn, 10.0);
}

TEST_F(DeriveTest, StormNeedsPauseAndNoProgress) {
  Feed();
  // Fully paused on rx prio 3, but our tx on prio 3 still moves: congestion, not a storm.
  for (int i = 0; i < 4; ++i) {
    port_.Advance(milliseconds(250));
    port_.Traffic();
    port_.Pause(kRx, 3, 1.0, milliseconds(250), 2000);
    Feed();
  }
  EXPECT_FALSE(Stormed(3, kRx));
  // Now tx prio 3 stops: detected after one 250 ms interval (>= 200 ms detection time).
  port_.Advance(milliseconds(250));
  port_.Pause(kRx, 3, 1.0, milliseconds(250), 2000);
  Feed();
  EXPECT_TRUE(Stormed(3, kRx));
  EXPECT_FALSE(Stormed(3, kTx));
  EXPECT_EQ(Storm(Device(), 3, kRx)->episodes, 1u);
}

TEST_F(DeriveTest, StormRoleIsOriginWhenThePortPausesAndVictimWhenItIsPaused) {
  auto role_of = [&](int prio) {
    for (const PrioStormRole& r : Device().storm_roles) {
      if (r.prio == prio) return r.role;
    }
    return StormRole::kNone;
  };
  Feed();
  Idle(milliseconds(250));
  EXPECT_EQ(role_of(3), StormRole::kNone);
  // Paused by the switch, our tx on priority 3 held: a victim.
  port_.Advance(milliseconds(250));
  port_.Pause(kRx, 3, 1.0, milliseconds(250), 2000);
  Feed();
  ASSERT_TRUE(Stormed(3, kRx));
  EXPECT_EQ(role_of(3), StormRole::kVictim);
  // Now it also pauses its switch port and receives nothing: the port is where the storm starts,
  // whatever it receives.
  port_.Advance(milliseconds(250));
  port_.Pause(kRx, 3, 1.0, milliseconds(250), 2000);
  port_.Pause(kTx, 3, 1.0, milliseconds(250), 2000);
  Feed();
  ASSERT_TRUE(Stormed(3, kTx));
  EXPECT_EQ(role_of(3), StormRole::kOrigin);
}

TEST_F(DeriveTest, StormStartingInsideAnIntervalIsCreditedFromThePauseTail) {
  Feed();
  Idle(milliseconds(250));
  EXPECT_EQ(deriver_->NextSampleDue(port_.sample().time), std::nullopt) << "nothing suspected";
  // A storm on rx prio 3 begins 10 ms into this interval: 240 ms paused, but tx prio 3 moved
  // before it began, so the interval cannot be a storm yet.
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Pause(kRx, 3, 0.96, milliseconds(250), 2000);
  Feed();
  ASSERT_FALSE(Stormed(3, kRx));
  const SampleTime t = port_.sample().time;
  // The onset is credited at t - 240 ms, so the run would reach the detection time at t - 40 ms;
  // the follow-up still needs an interval of its own: half the detection time.
  EXPECT_EQ(deriver_->NextSampleDue(t), t + milliseconds(100));
  EXPECT_EQ(Evidence(), "unknown") << "a tail candidate is not yet a storm";
  // Sampled at the requested time: 100 ms of full pause without progress confirms the storm,
  // 340 ms after it began, with the onset credited from the tail.
  port_.Advance(milliseconds(100));
  port_.Pause(kRx, 3, 1.0, milliseconds(100), 2000);
  Feed();
  EXPECT_TRUE(Stormed(3, kRx));
  EXPECT_EQ(deriver_->NextSampleDue(port_.sample().time), std::nullopt);
}

TEST_F(DeriveTest, SparseReadsConfirmAStormWithinThePeriodAndAShortFollowUp) {
  // An idle port read every 1.75 s; a storm begins 1.6 s after a read (the worst phase but one).
  Feed();
  Idle(milliseconds(1750));
  const SampleTime onset = port_.sample().time + milliseconds(1600);
  port_.Advance(milliseconds(1750));
  port_.Pause(kRx, 3, 150.0 / 1750.0, milliseconds(1750), 20);
  Feed();
  ASSERT_FALSE(Stormed(3, kRx)) << "150 ms of pause in 1.75 s is no storm by itself";
  const SampleTime t = port_.sample().time;
  ASSERT_EQ(deriver_->NextSampleDue(t), t + milliseconds(100));
  port_.Advance(milliseconds(100));
  port_.Pause(kRx, 3, 1.0, milliseconds(100), 20);
  Feed();
  ASSERT_TRUE(Stormed(3, kRx));
  EXPECT_EQ(port_.sample().time - onset, milliseconds(250)) << "confirmed 250 ms after onset";
}

TEST_F(DeriveTest, TailCandidateIsDroppedWhenTheFollowUpIsClear) {
  Feed();
  Idle(milliseconds(250));
  // 240 ms of ordinary pause, then traffic flows again: the follow-up shows no storm.
  port_.Advance(milliseconds(1000));
  port_.Traffic();
  port_.Pause(kRx, 3, 0.24, milliseconds(1000), 2000);
  Feed();
  ASSERT_NE(deriver_->NextSampleDue(port_.sample().time), std::nullopt);
  port_.Advance(milliseconds(100));
  port_.Traffic();
  port_.Pause(kRx, 3, 0.1, milliseconds(100), 20);
  Feed();
  EXPECT_FALSE(Stormed(3, kRx));
  EXPECT_EQ(deriver_->NextSampleDue(port_.sample().time), std::nullopt);
  EXPECT_EQ(Storm(Device(), 3, kRx)->episodes, 0u);
}

TEST_F(DeriveTest, ShortPauseTailNeedsNoEarlySample) {
  Feed();
  // 90 ms of pause (< half the detection time) with traffic: a storm that began then fills the
  // next interval, which declares it on its own.
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Pause(kRx, 3, 0.36, milliseconds(250), 2000);
  Feed();
  EXPECT_EQ(deriver_->NextSampleDue(port_.sample().time), std::nullopt);
}

TEST_F(DeriveTest, DetectionRunLongerThanAPeriodAsksForTheSampleThatCompletesIt) {
  DeriveConfig config;
  config.storm = {0.8, milliseconds(600), milliseconds(1200)};
  Reset(config);
  Feed();
  port_.Advance(milliseconds(250));
  port_.Pause(kTx, 3, 1.0, milliseconds(250), 100);  // run from t0 = 0
  Feed();
  EXPECT_EQ(deriver_->NextSampleDue(port_.sample().time), SampleTime(milliseconds(600)));
  port_.Advance(milliseconds(250));
  port_.Pause(kTx, 3, 1.0, milliseconds(250), 100);
  Feed();
  EXPECT_EQ(deriver_->NextSampleDue(port_.sample().time), SampleTime(milliseconds(600)));
  EXPECT_FALSE(Stormed(3, kTx));
  port_.Advance(milliseconds(100));
  port_.Pause(kTx, 3, 1.0, milliseconds(100), 100);
  Feed();
  EXPECT_TRUE(Stormed(3, kTx));
  // A request that has passed (the device's read failed since) is not repeated.
  EXPECT_EQ(deriver_->NextSampleDue(SampleTime(milliseconds(700))), std::nullopt);
}

TEST_F(DeriveTest, StaleRequestOfADeviceThatWasNotReadAgainExpires) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Pause(kRx, 3, 0.96, milliseconds(250), 2000);
  Feed();
  const SampleTime due = port_.sample().time + milliseconds(100);
  EXPECT_EQ(deriver_->NextSampleDue(due - milliseconds(1)), due);
  EXPECT_EQ(deriver_->NextSampleDue(due), std::nullopt);
}

TEST_F(DeriveTest, StormBelowThresholdIsNotDetected) {
  Feed();
  for (int i = 0; i < 8; ++i) {
    port_.Advance(milliseconds(250));
    port_.Pause(kTx, 3, 0.79, milliseconds(250), 2000);
    Feed();
  }
  EXPECT_FALSE(Stormed(3, kTx));
}

TEST_F(DeriveTest, StormRestoresAndRecordsDuration) {
  DeriveConfig config;
  config.storm = {0.8, milliseconds(200), milliseconds(500)};
  Reset(config);
  Feed();
  for (int i = 0; i < 4; ++i) {  // 1 s of storm on tx prio 3 (rx prio 3 packets frozen)
    port_.Advance(milliseconds(250));
    port_.Pause(kTx, 3, 1.0, milliseconds(250), 100);
    Feed();
  }
  ASSERT_TRUE(Stormed(3, kTx));
  Idle(milliseconds(250), 2);  // 500 ms clear == restoration time
  const StormSignals* storm = Storm(Device(), 3, kTx);
  EXPECT_FALSE(storm->stormed);
  EXPECT_EQ(storm->episodes, 1u);
  EXPECT_DOUBLE_EQ(storm->last_episode_seconds, 1.0);
}

TEST_F(DeriveTest, NicStallEventStormsThePausingPriority) {
  port_.sample().lossless_prios = 0x18;
  port_.sample().Set(slot::PauseFrames(kTx, 4), 0);
  Feed();
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Add(slot::PauseFrames(kTx, 4), 10);  // only priority 4 sent pause frames
  port_.Add(slot::kStormErrorEvents, 1);
  Feed();
  EXPECT_TRUE(Stormed(4, kTx));
  EXPECT_FALSE(Stormed(3, kTx));
  EXPECT_FALSE(Stormed(4, kRx));
}

TEST_F(DeriveTest, NicStallEventWithoutPauseActivityStormsAllLossless) {
  port_.sample().lossless_prios = 0x18;
  Feed();
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Add(slot::kStormWarningEvents, 1);
  Feed();
  EXPECT_TRUE(Stormed(3, kTx));
  EXPECT_TRUE(Stormed(4, kTx));
  EXPECT_FALSE(Stormed(0, kTx));
}

TEST_F(DeriveTest, ResetIntervalDoesNotDetectAStorm) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Put(slot::PauseDurationMicros(kTx, 3), 0);  // reset while it would look like a storm
  port_.Add(slot::kStormErrorEvents, 5);
  Feed();
  EXPECT_FALSE(Stormed(3, kTx));
}

TEST_F(DeriveTest, StormSeriesExistForLosslessPrioritiesBeforeAnyPause) {
  Feed();
  const DeviceSignals& device = Device();
  ASSERT_NE(Storm(device, 3, kRx), nullptr);
  ASSERT_NE(Storm(device, 3, kTx), nullptr);
  EXPECT_EQ(Storm(device, 0, kRx), nullptr);
  EXPECT_FALSE(device.AnyStorm());
}

TEST_F(DeriveTest, DeviceVanishingMidStormLeavesNoSeries) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Pause(kTx, 3, 1.0, milliseconds(250), 100);
  Feed();
  ASSERT_TRUE(Stormed(3, kTx));
  deriver_->RetainOnly(std::vector<std::string>{"eth1"});
  EXPECT_EQ(deriver_->device_count(), 0u);
  EXPECT_EQ(deriver_->Signals().Find("eth0"), nullptr);
  // The same name coming back is a new device: no episode carried over, first sample a baseline.
  port_.sample().identity.ifindex = 9;
  port_.Advance(milliseconds(250));
  Feed();
  const StormSignals* storm = Storm(Device(), 3, kTx);
  ASSERT_NE(storm, nullptr);
  EXPECT_FALSE(storm->stormed);
  EXPECT_EQ(storm->episodes, 0u);
}

TEST_F(DeriveTest, ForgetRemovesOnlyThatDevice) {
  Feed("eth0");
  Feed("eth1");
  deriver_->Forget("eth0");
  const DerivedSignals signals = deriver_->Signals();
  ASSERT_EQ(signals.devices.size(), 1u);
  EXPECT_EQ(signals.devices[0].netdev, "eth1");
  EXPECT_EQ(signals.devices[0].rdma_device, "mlx5_0");
}

TEST_F(DeriveTest, StormOutlivesDriverReloadOnlyIfStillStormed) {
  Feed();
  port_.Advance(milliseconds(250));
  port_.Pause(kTx, 3, 1.0, milliseconds(250), 100);
  Feed();
  ASSERT_TRUE(Stormed(3, kTx));
  // Driver reload: new ifindex, counters restart from zero.
  port_.Advance(milliseconds(250));
  port_.sample().identity.ifindex = 42;
  for (size_t i = 0; i < slot::kCount; ++i) port_.Put(i, 0);
  Feed();
  EXPECT_TRUE(Stormed(3, kTx));  // not proven over: the unknown interval restores nothing
  Idle(milliseconds(250), 3);    // 750 ms healthy >= 400 ms restoration
  EXPECT_FALSE(Stormed(3, kTx));
  EXPECT_EQ(Storm(Device(), 3, kTx)->episodes, 1u);
}

// Storm guard (docs/signals.md, "Storm guard"). Default storm config: detection 200 ms,
// restoration 400 ms, so "clear" needs 400 ms of quiet history.

TEST_F(DeriveTest, StormEvidenceIsUnknownUntilQuietHistorySpansTheRestorationTime) {
  Feed();
  EXPECT_EQ(Evidence(), "unknown") << "a baseline alone says nothing";
  Idle(milliseconds(250));
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(149));
  EXPECT_EQ(Evidence(), "unknown") << "399 ms of history";
  Idle(milliseconds(1));
  EXPECT_EQ(Evidence(), "clear") << "exactly 400 ms of history";
  Idle(milliseconds(250), 4);
  EXPECT_EQ(Evidence(), "clear");
}

TEST_F(DeriveTest, StormEvidenceSpanIsTheDetectionTimeWhenItIsLonger) {
  DeriveConfig config;
  config.storm = {0.8, milliseconds(600), milliseconds(300)};
  Reset(config);
  Feed();
  Idle(milliseconds(300));
  Idle(milliseconds(299));
  EXPECT_EQ(Evidence(), "unknown") << "past the restoration time, short of the detection time";
  Idle(milliseconds(1));
  EXPECT_EQ(Evidence(), "clear");
}

TEST_F(DeriveTest, StormEvidenceFollowsADeclaredStormAndItsRestoration) {
  Feed();
  Idle(milliseconds(250), 2);
  ASSERT_EQ(Evidence(), "clear");
  port_.Advance(milliseconds(250));  // t = 750: paused throughout, rx prio 3 frozen
  port_.Pause(kTx, 3, 1.0, milliseconds(250), 100);
  Feed();
  ASSERT_TRUE(Stormed(3, kTx));
  EXPECT_EQ(Evidence(), "storm");
  Idle(milliseconds(250));
  EXPECT_EQ(Evidence(), "storm") << "250 ms clear < 400 ms restoration";
  Idle(milliseconds(150));
  EXPECT_FALSE(Stormed(3, kTx));
  EXPECT_EQ(Evidence(), "clear") << "restored by the same 400 ms that make the history quiet";
}

TEST_F(DeriveTest, StormEvidenceIsStormWhileADetectionRunIsUnderWay) {
  DeriveConfig config;
  config.storm = {0.8, milliseconds(600), milliseconds(600)};
  Reset(config);
  Feed();
  Idle(milliseconds(250), 3);
  ASSERT_EQ(Evidence(), "clear");
  port_.Advance(milliseconds(250));
  port_.Pause(kTx, 3, 1.0, milliseconds(250), 100);
  Feed();
  EXPECT_FALSE(Stormed(3, kTx)) << "250 ms < 600 ms detection time";
  EXPECT_EQ(Evidence(), "storm");
  // The run breaks before the detection time: no storm, but the history now shows storm signs.
  Idle(milliseconds(250));
  EXPECT_FALSE(Stormed(3, kTx));
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(349));
  EXPECT_EQ(Evidence(), "unknown") << "599 ms quiet since the condition";
  Idle(milliseconds(1));
  EXPECT_EQ(Evidence(), "clear");
}

TEST_F(DeriveTest, StormEvidenceWaitsForTheSampleThatDecidesASuspectedStorm) {
  Feed();
  Idle(milliseconds(250), 2);
  ASSERT_EQ(Evidence(), "clear");
  // 240 ms paused with traffic: not the condition, but possibly a storm that began in the
  // interval; the deriver asked for the sample that decides it.
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Pause(kRx, 3, 0.96, milliseconds(250), 2000);
  Feed();
  ASSERT_NE(deriver_->NextSampleDue(port_.sample().time), std::nullopt);
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(200));  // traffic moved: it was not a storm
  EXPECT_EQ(Evidence(), "clear");
}

TEST_F(DeriveTest, StormEvidenceIsUnknownAfterACounterResetUntilHistoryRefills) {
  Feed();
  Idle(milliseconds(250), 2);
  ASSERT_EQ(Evidence(), "clear");
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Put(slot::PauseFrames(kRx, 3), 0);
  Feed();
  ASSERT_EQ(Device().discarded_intervals[static_cast<size_t>(DiscardReason::kCounterReset)], 1u);
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(250));
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(149));
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(1));
  EXPECT_EQ(Evidence(), "clear") << "400 ms since the sample after the reset";
}

TEST_F(DeriveTest, StormEvidenceIsUnknownAfterADriverReloadOrAClockStep) {
  Feed();
  Idle(milliseconds(250), 2);
  port_.Advance(milliseconds(250));
  port_.sample().identity.ifindex = 42;
  Feed();
  EXPECT_EQ(Evidence(), "unknown") << "identity change";
  Idle(milliseconds(400));
  ASSERT_EQ(Evidence(), "clear");
  Feed();  // same timestamp again
  EXPECT_EQ(Evidence(), "unknown") << "time did not advance";
}

TEST_F(DeriveTest, StormEvidenceOfAReappearingDeviceStartsOver) {
  Feed();
  Idle(milliseconds(250), 2);
  ASSERT_EQ(Evidence(), "clear");
  deriver_->Forget("eth0");
  port_.Advance(milliseconds(250));
  Feed();
  EXPECT_EQ(Evidence(), "unknown");
}

TEST_F(DeriveTest, StormEvidenceWithoutDurationCountersNeedsStillPauseFrames) {
  for (Direction d : {kRx, kTx}) port_.Remove(slot::PauseDurationMicros(d, 3));
  Feed();
  Idle(milliseconds(250));
  Idle(milliseconds(150));
  EXPECT_EQ(Evidence(), "clear") << "400 ms without a pause frame";
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Add(slot::PauseFrames(kRx, 3), 1);
  Feed();
  EXPECT_FALSE(Device().AnyStorm()) << "no duration counter: the storm verdict is never known";
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(250));
  Idle(milliseconds(149));
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(1));
  EXPECT_EQ(Evidence(), "clear");
}

TEST_F(DeriveTest, StormEvidenceIsUnknownWhileADurationCounterComesAndGoes) {
  Feed();
  Idle(milliseconds(250), 2);
  ASSERT_EQ(Evidence(), "clear");
  port_.Remove(slot::PauseDurationMicros(kRx, 3));
  Idle(milliseconds(250));
  EXPECT_EQ(Evidence(), "unknown") << "in only one sample: the interval cannot judge it";
  Idle(milliseconds(400));
  EXPECT_EQ(Evidence(), "clear") << "from then on pause frames decide";
}

TEST_F(DeriveTest, StormEvidenceWithoutPfcCountersNeedsASilentStallDetector) {
  // PFC off on every priority: mlx5 has no per-priority pause counters, nothing can storm.
  for (Direction d : {kRx, kTx}) {
    port_.Remove(slot::PauseFrames(d, 3));
    port_.Remove(slot::PauseDurationMicros(d, 3));
  }
  Feed();
  Idle(milliseconds(400));
  EXPECT_EQ(Evidence(), "clear");
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Add(slot::kStormWarningEvents, 1);
  Feed();
  EXPECT_FALSE(Device().AnyStorm()) << "no lossless priority to attribute the event to";
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(400));
  EXPECT_EQ(Evidence(), "clear");
}

TEST_F(DeriveTest, StormEvidenceNeverClearForALosslessPriorityWithoutCounters) {
  port_.sample().lossless_prios = 0x18;  // priority 4 lossless, but no pause counter to watch
  Feed();
  Idle(milliseconds(250), 8);
  EXPECT_EQ(Evidence(), "unknown");
  port_.sample().lossless_prios = 0x08;
  Idle(milliseconds(400));
  EXPECT_EQ(Evidence(), "clear");
}

TEST_F(DeriveTest, StormEvidenceIsUnknownAfterAGapInTheReadsUntilTheSpanIsCoveredAgain) {
  // Default gap bound: 500 ms (StormGapBound of the default 250 ms sampler period).
  Feed();
  Idle(milliseconds(250), 3);
  ASSERT_EQ(Evidence(), "clear");
  Idle(milliseconds(500));
  EXPECT_EQ(Evidence(), "clear") << "an interval of exactly the bound is no gap";
  Idle(milliseconds(501));
  EXPECT_EQ(Evidence(), "unknown") << "quiet, but seen only as one 501 ms average";
  Idle(milliseconds(250));
  EXPECT_EQ(Evidence(), "unknown") << "250 ms covered since the gap";
  Idle(milliseconds(149));
  EXPECT_EQ(Evidence(), "unknown");
  Idle(milliseconds(1));
  EXPECT_EQ(Evidence(), "clear") << "400 ms covered without a gap again";
}

TEST_F(DeriveTest, StormEvidenceOfAPortReadOnlyEverySecondIsNeverClear) {
  Feed();
  Idle(milliseconds(1000), 6);
  EXPECT_EQ(Evidence(), "unknown");
  DeriveConfig config;
  config.max_read_gap = milliseconds(1000);
  Reset(config);
  Feed();
  Idle(milliseconds(1000));
  EXPECT_EQ(Evidence(), "clear") << "the bound is the configured one";
}

TEST_F(DeriveTest, StormEvidenceCarriesItsNewestReadAndTheReadThatCanClearIt) {
  Feed();
  const SampleTime t0 = port_.sample().time;
  EXPECT_EQ(Device().storm_evidence_read_at, t0);
  // Nothing quiet yet: the next interval starts the span, so a read one span later can clear it.
  EXPECT_EQ(Device().storm_evidence_next_read, t0 + milliseconds(400));
  Idle(milliseconds(100));
  EXPECT_EQ(Device().storm_evidence_read_at, t0 + milliseconds(100));
  EXPECT_EQ(Device().storm_evidence_next_read, t0 + milliseconds(400)) << "the span's end";
  Idle(milliseconds(300));
  ASSERT_EQ(Evidence(), "clear");
  EXPECT_EQ(Device().storm_evidence_next_read, std::nullopt);
  // After a gap the span starts again at the newest read.
  Idle(milliseconds(2000));
  ASSERT_EQ(Evidence(), "unknown");
  const SampleTime t1 = port_.sample().time;
  EXPECT_EQ(Device().storm_evidence_read_at, t1);
  EXPECT_EQ(Device().storm_evidence_next_read, t1 + milliseconds(400));
  // A suspected storm: the follow-up read the deriver asked for.
  port_.Advance(milliseconds(250));
  port_.Traffic();
  port_.Pause(kRx, 3, 0.96, milliseconds(250), 2000);
  Feed();
  ASSERT_EQ(Evidence(), "unknown");
  EXPECT_EQ(Device().storm_evidence_next_read, deriver_->NextSampleDue(port_.sample().time));
  // A storm: no read can clear it soon.
  port_.Advance(milliseconds(250));
  port_.Pause(kTx, 3, 1.0, milliseconds(250), 100);
  Feed();
  ASSERT_EQ(Evidence(), "storm");
  EXPECT_EQ(Device().storm_evidence_next_read, std::nullopt);
}

TEST_F(DeriveTest, StormEvidenceNextReadKeepsTheSpanWithinTheGapBound) {
  DeriveConfig config;
  config.max_read_gap = milliseconds(150);
  Reset(config);
  Feed();
  const SampleTime t0 = port_.sample().time;
  EXPECT_EQ(Device().storm_evidence_next_read, t0 + milliseconds(150));
  Idle(milliseconds(150), 2);
  EXPECT_EQ(Device().storm_evidence_next_read, t0 + milliseconds(400)) << "the span's end is near";
  Idle(milliseconds(100));
  EXPECT_EQ(Evidence(), "clear");
}

TEST(FillFromEthtoolTest, CopiesMappedCountersIntoSlots) {
  CounterSet counters;
  counters.values = {11, 22, 33, 44, 55, 66};
  std::vector<MappedCounter> mapping = {
      {PortCounter::kPauseFrames, Direction::kTx, 3, 0},
      {PortCounter::kPauseDurationMicros, Direction::kRx, 3, 1},
      {PortCounter::kPrioPackets, Direction::kTx, 0, 2},
      {PortCounter::kPauseStormErrorEvents, Direction::kNone, -1, 3},
      {PortCounter::kPrioDiscards, Direction::kRx, 3, 4},   // not an input of the derivation
      {PortCounter::kPauseFrames, Direction::kRx, 3, 99},   // stale position: ignored
      {PortCounter::kPauseFrames, Direction::kNone, 3, 5},  // no direction: ignored
  };
  DeviceSample sample;
  FillFromEthtool(counters, mapping, sample);
  EXPECT_EQ(sample.values[slot::PauseFrames(kTx, 3)], 11u);
  EXPECT_EQ(sample.values[slot::PauseDurationMicros(kRx, 3)], 22u);
  EXPECT_EQ(sample.values[slot::PrioPackets(kTx, 0)], 33u);
  EXPECT_EQ(sample.values[slot::kStormErrorEvents], 44u);
  EXPECT_EQ(sample.present.count(), 4u);
  EXPECT_FALSE(sample.present.test(slot::PauseFrames(kRx, 3)));
}

// Capture 16: a real mlx5 100GbE `ethtool -S` (PFC off: no per-priority pause counters, storm
// counters present). Through the real name mapping, the derivation gets exactly the counters the
// NIC has: traffic per priority, the stall counters, and no lossless priority.
TEST(FillFromEthtoolTest, RealConnectXCaptureThroughTheNameMapping) {
  const std::string text = testing::ReadCapture("16_");
  ASSERT_FALSE(text.empty()) << "capture 16 not found in " << ROCEQOS_CAPTURES_DIR;
  const auto blocks = testing::ParseEthtoolStats(testing::CaptureBody(text));
  ASSERT_FALSE(blocks.empty());
  const testing::EthtoolBlock& block = blocks.front();
  CounterSet counters{std::make_shared<const std::vector<std::string>>(testing::Names(block)),
                      testing::Values(block)};
  const std::vector<MappedCounter> mapping = MapMlx5EthtoolNames(*counters.names);
  DeviceSample sample;
  FillFromEthtool(counters, mapping, sample);

  EXPECT_TRUE(sample.present.test(slot::kStormWarningEvents));
  EXPECT_TRUE(sample.present.test(slot::kStormErrorEvents));
  EXPECT_EQ(sample.values[slot::PrioPackets(kRx, 0)], 15005729u);
  EXPECT_EQ(sample.values[slot::PrioPackets(kTx, 0)], 7222593u);
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    for (Direction d : {kRx, kTx}) {
      EXPECT_FALSE(sample.present.test(slot::PauseFrames(d, prio))) << prio;
      EXPECT_FALSE(sample.present.test(slot::PauseDurationMicros(d, prio))) << prio;
    }
  }
  EXPECT_EQ(sample.LosslessPrios(), 0);

  // Derived from it: no pause series, no storm series (nothing is lossless), no discards.
  SignalDeriver deriver{DeriveConfig{}};
  deriver.Observe("ens1f0np0", sample);
  sample.time += milliseconds(250);
  sample.values[slot::PrioPackets(kRx, 0)] += 1000;
  deriver.Observe("ens1f0np0", sample);
  const DerivedSignals signals = deriver.Signals();
  ASSERT_EQ(signals.devices.size(), 1u);
  EXPECT_TRUE(signals.devices[0].pause.empty());
  EXPECT_TRUE(signals.devices[0].storms.empty());
  EXPECT_EQ(signals.devices[0].discarded_intervals, (std::array<uint64_t, kDiscardReasonCount>{}));
}

TEST(RdmaSignalIndexTest, FindsCountersByNameAndReindexesOnNewNames) {
  auto names = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{"out_of_buffer", "rp_cnp_ignored", "rp_cnp_handled",
                               "np_ecn_marked_roce_packets", "np_cnp_sent"});
  CounterSet counters{names, {1, 2, 3, 4, 5}};
  RdmaSignalIndex index;
  DeviceSample sample;
  index.Fill(counters, sample);
  EXPECT_EQ(sample.values[slot::kRpCnpHandled], 3u);
  EXPECT_EQ(sample.values[slot::kNpEcnMarkedRocePackets], 4u);
  EXPECT_EQ(sample.values[slot::kNpCnpSent], 5u);

  // A device without congestion counters (e.g. rxe): nothing is present.
  auto other = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{"sent_pkts", "rcvd_pkts"});
  DeviceSample bare;
  index.Fill(CounterSet{other, {7, 8}}, bare);
  EXPECT_FALSE(bare.present.test(slot::kNpCnpSent));
  EXPECT_FALSE(bare.present.test(slot::kRpCnpHandled));
}

}  // namespace
}  // namespace roceqos
