#include "exporter/app/storm_witness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/ethtool_map.h"
#include "exporter/sampling/source_call.h"
#include "exporter/signals/derive_stage.h"
#include "tests/unit/support/fake_sources.h"

namespace roceqos {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using testing::FakeInventory;
using testing::MakeDevice;

// The sampler's clock: the steady clock plus an offset the test moves forward, so that a read
// becomes old without the test sleeping. Read by the sampler thread, moved by the test.
class SteppedClock {
 public:
  nanoseconds Now() const { return SteadyNow() + nanoseconds(offset_.load()); }
  void Step(nanoseconds by) { offset_ += by.count(); }

 private:
  std::atomic<int64_t> offset_{0};
};

// mlx5 names with PFC on priority 3, values computed from the clock at each read: "quiet*" ports
// never move, "storm*" ports send tx pause all the time while nothing arrives on priority 3 (a
// tx PFC storm). Nothing here is shared with the test thread but the clock.
class ClockDrivenEthtool : public EthtoolIo {
 public:
  explicit ClockDrivenEthtool(const SteppedClock& clock)
      : clock_(clock),
        start_(clock.Now()),
        names_(std::make_shared<const std::vector<std::string>>(std::vector<std::string>{
            "rx_prio3_packets", "tx_prio3_packets", "rx_prio3_pause", "rx_prio3_pause_duration",
            "tx_prio3_pause", "tx_prio3_pause_duration"})) {}

  Result<uint32_t> StatsCount(const std::string&) override {
    return static_cast<uint32_t>(names_->size());
  }
  Result<std::vector<std::string>> StatsNames(const std::string&, uint32_t) override {
    return *names_;
  }
  Result<std::vector<uint64_t>> StatsValues(const std::string& ifname, uint32_t) override {
    std::vector<uint64_t> values{100, 100, 10, 1000, 10, 1000};
    if (ifname.starts_with("storm")) {
      const auto paused =
          std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now() - start_);
      values[4] += static_cast<uint64_t>(paused.count() / 100);  // tx_prio3_pause
      values[5] += static_cast<uint64_t>(paused.count());        // tx_prio3_pause_duration
    }
    return values;
  }
  Result<DriverInfo> GetDriverInfo(const std::string&) override { return DriverInfo{}; }

 private:
  const SteppedClock& clock_;
  const nanoseconds start_;
  const std::shared_ptr<const std::vector<std::string>> names_;
};

// A real sampler thread with the derive stage. Storm detection and restoration 100 ms (the quiet
// span), gap bound 500 ms. A port that does not move is read at its first two reads 100 ms apart
// (a first read counts as moving), which clear its evidence, then only at the idle period: a
// minute, so within the test an idle port is read only when the witness asks.
class StormWitnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto inventory = std::make_unique<FakeInventory>();
    for (const char* name : {"quiet0", "storm0"}) {
      inventory->inventory.devices.push_back(MakeDevice(name, name[0] == 'q' ? 2 : 3));
    }
    SamplerSources sources;
    sources.inventory = std::move(inventory);
    sources.ethtool = std::make_unique<ClockDrivenEthtool>(clock_);
    sources.map_ethtool_names = MapMlx5EthtoolNames;
    sources.selected_by_default = [](const Device&) { return true; };
    SamplerOptions options;
    options.period = milliseconds(100);
    options.idle_period = std::chrono::minutes(1);
    options.max_period = std::chrono::minutes(1);
    options.discovery_interval = std::chrono::minutes(10);
    sampler_ = std::make_unique<Sampler>(std::move(options), std::move(sources),
                                         [this] { return clock_.Now(); });
    DeriveConfig derive;
    derive.storm = {0.8, milliseconds(100), milliseconds(100)};
    derive.max_read_gap = milliseconds(500);
    sampler_->AddStage(std::make_unique<DeriveStage>(derive));
    sampler_->Start();
  }
  void TearDown() override { sampler_->Stop(); }

  // The newest snapshot's evidence of `netdev` ("" when it has none), once `sequence` is out.
  std::string EvidenceAt(uint64_t sequence, const std::string& netdev) {
    if (!sampler_->WaitForSequence(sequence, std::chrono::steady_clock::now() + seconds(10))) {
      return "no snapshot";
    }
    for (const DeviceSnapshot& device : sampler_->Latest()->devices) {
      if (device.device->name == netdev && device.derived) {
        return std::string(StormEvidenceName(device.derived->signals.storm_evidence));
      }
    }
    return "";
  }
  // Whether the snapshots reach `evidence` for `netdev` within a few dozen samples.
  bool Reaches(const std::string& netdev, std::string_view evidence) {
    for (uint64_t sequence = 1; sequence <= 50; ++sequence) {
      if (EvidenceAt(sequence, netdev) == evidence) return true;
    }
    return false;
  }
  std::chrono::steady_clock::time_point SamplerNow() {
    return std::chrono::steady_clock::time_point(sampler_->Now());
  }

  SteppedClock clock_;
  std::unique_ptr<Sampler> sampler_;
};

constexpr nanoseconds kMaxAge = milliseconds(250);

TEST_F(StormWitnessTest, AStaleIdlePortIsReadOnDemandAndItsFreshVerdictReturned) {
  // The second read (100 ms after the first) clears the idle port; then it is not read again.
  ASSERT_TRUE(Reaches("quiet0", "clear"));
  SamplerStormWitness witness(*sampler_);
  const StormFacts fresh = witness.Witness("quiet0", seconds(10));
  ASSERT_EQ(fresh.verdict, StormGuard::kClear) << "recent enough for a 10 s max age";
  ASSERT_TRUE(fresh.newest_read);

  // 10 s later by the sampler's clock, the idle port's last read is 10 s old.
  clock_.Step(seconds(10));
  const auto asked_at = SamplerNow();
  const StormFacts facts = witness.Witness("quiet0", kMaxAge);
  EXPECT_EQ(facts.verdict, StormGuard::kClear);
  ASSERT_TRUE(facts.newest_read);
  EXPECT_GE(*facts.newest_read, asked_at) << "read after the question, not the 10 s old read";
  EXPECT_LE(SamplerNow() - *facts.newest_read, kMaxAge);
  // The read that ended the 10 s gap could not clear the evidence alone: the witness waited for
  // the read one quiet span (100 ms) later.
  EXPECT_GE(*facts.newest_read - asked_at, milliseconds(100));
}

TEST_F(StormWitnessTest, AStaleClearWithoutReadsInTimeIsNotPassedOffAsFresh) {
  ASSERT_TRUE(Reaches("quiet0", "clear"));
  sampler_->Stop();  // no read can come any more
  clock_.Step(seconds(10));
  SamplerStormWitness witness(*sampler_, {.max_wait = milliseconds(50)});
  const StormFacts facts = witness.Witness("quiet0", kMaxAge);
  ASSERT_TRUE(facts.newest_read);
  EXPECT_GT(SamplerNow() - *facts.newest_read, kMaxAge)
      << "the answer carries the old read's time, for the gate to refuse";
}

TEST_F(StormWitnessTest, ADeviceNotInTheSnapshotIsUnknownWithoutARead) {
  ASSERT_NE(EvidenceAt(1, "quiet0"), "");
  SamplerStormWitness witness(*sampler_);
  const StormFacts facts = witness.Witness("gone0", kMaxAge);
  EXPECT_EQ(facts.verdict, StormGuard::kUnknown);
  EXPECT_FALSE(facts.newest_read);
}

TEST_F(StormWitnessTest, AStormIsReportedAsAStorm) {
  SamplerStormWitness witness(*sampler_);
  ASSERT_TRUE(sampler_->WaitForSequence(1, std::chrono::steady_clock::now() + seconds(10)));
  const StormFacts facts = witness.Witness("storm0", kMaxAge);
  EXPECT_EQ(facts.verdict, StormGuard::kStorm);
  ASSERT_TRUE(facts.newest_read);
  // And the quiet port beside it is not.
  EXPECT_NE(witness.Witness("quiet0", kMaxAge).verdict, StormGuard::kStorm);
}

}  // namespace
}  // namespace roceqos
