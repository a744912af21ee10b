#include "exporter/signals/derive_stage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "collectors/ethtool_map.h"
#include "exporter/app/cli.h"
#include "exporter/core/derived_signals.h"
#include "exporter/core/qos_state.h"
#include "exporter/render/metrics.h"
#include "tests/unit/support/fake_sources.h"

namespace roceqos {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using testing::FakeClock;
using testing::FakeEthtool;
using testing::FakeInventory;
using testing::FakeRdma;
using ::testing::HasSubstr;
using testing::MakeCounters;
using testing::MakeDevice;
using testing::MakePort;
using ::testing::Not;

// mlx5's per-priority names with PFC on priority 3, plus the stall counters.
std::vector<std::string> Mlx5Names() {
  std::vector<std::string> names;
  for (int p = 0; p < 8; ++p) {
    for (const char* f :
         {"rx_prio%d_bytes", "rx_prio%d_packets", "tx_prio%d_bytes", "tx_prio%d_packets"}) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), f, p);
      names.push_back(buf);
    }
  }
  for (const char* n : {"rx_prio3_pause", "rx_prio3_pause_duration", "tx_prio3_pause",
                        "tx_prio3_pause_duration", "rx_prio3_pause_transition",
                        "tx_pause_storm_warning_events", "tx_pause_storm_error_events"}) {
    names.push_back(n);
  }
  return names;
}

const std::vector<std::string> kRdmaNames = {"out_of_buffer", "rp_cnp_ignored", "rp_cnp_handled",
                                             "np_ecn_marked_roce_packets", "np_cnp_sent"};

std::string Render(const Snapshot& snapshot) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, RenderSnapshot(&snapshot));
  return out.str();
}

// The real sampler with fake kernel sources, the real mlx5 name mapping and the derive stage:
// samples 250 ms apart on a fake monotonic clock.
class DeriveStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto inventory = std::make_unique<FakeInventory>();
    auto ethtool = std::make_unique<FakeEthtool>();
    inventory_ = inventory.get();
    ethtool_ = ethtool.get();
    SamplerSources sources;
    sources.inventory = std::move(inventory);
    sources.ethtool = std::move(ethtool);
    sources.open_rdma = [this]() -> Result<std::unique_ptr<RdmaCollector>> {
      auto rdma = std::make_unique<FakeRdma>();
      rdma_ = rdma.get();
      return std::unique_ptr<RdmaCollector>(std::move(rdma));
    };
    sources.map_ethtool_names = MapMlx5EthtoolNames;
    sources.selected_by_default = [](const Device& d) { return d.driver == "mlx5_core"; };
    sampler_ = std::make_unique<Sampler>(SamplerOptions{}, std::move(sources), clock_.AsClock());
    sampler_->AddStage(std::make_unique<DeriveStage>(DeriveConfig{}));
  }

  void AddDevice(const std::string& name, int32_t ifindex, bool with_rdma) {
    Device device = MakeDevice(name, ifindex);
    if (with_rdma) {
      RdmaPort port = MakePort("mlx5_" + std::to_string(ifindex), 1, name);
      port.device_index = static_cast<uint32_t>(ifindex);
      device.rdma_ports.push_back(port);
      rdma_values_[port.device + "/1"].assign(kRdmaNames.size(), 0);
    }
    ethtool_->SetNames(name, Mlx5Names());
    inventory_->inventory.devices.push_back(std::move(device));
  }
  void Add(const std::string& netdev, const std::string& counter, uint64_t amount) {
    FakeEthtool::Entry& e = ethtool_->entries.at(netdev);
    for (size_t i = 0; i < e.names->size(); ++i) {
      if ((*e.names)[i] == counter) e.values[i] += amount;
    }
  }
  void AddRdma(const std::string& port, size_t counter, uint64_t amount) {
    rdma_values_[port][counter] += amount;
  }
  void Traffic(const std::string& netdev, bool tx_prio3_moves) {
    for (int p = 0; p < 8; ++p) {
      Add(netdev, "rx_prio" + std::to_string(p) + "_packets", 100);
      if (p != 3 || tx_prio3_moves) Add(netdev, "tx_prio" + std::to_string(p) + "_packets", 100);
    }
  }
  std::shared_ptr<const Snapshot> Sample() {
    if (rdma_) {
      for (const auto& [port, values] : rdma_values_) {
        rdma_->counters[port] = MakeCounters(kRdmaNames, values);
      }
    }
    sampler_->SampleOnce();
    clock_.now += milliseconds(250);
    return sampler_->Latest();
  }

  FakeClock clock_;
  FakeInventory* inventory_ = nullptr;
  FakeEthtool* ethtool_ = nullptr;
  FakeRdma* rdma_ = nullptr;
  std::map<std::string, std::vector<uint64_t>> rdma_values_;
  std::unique_ptr<Sampler> sampler_;
};

constexpr char kStormRx[] = "roce_pfc_storm{netdev=\"ens1f0np0\",prio=\"3\",direction=\"rx\"} 1";
constexpr char kNoStormRx[] = "roce_pfc_storm{netdev=\"ens1f0np0\",prio=\"3\",direction=\"rx\"} 0";

TEST_F(DeriveStageTest, StormThroughTheSamplerAndMetrics) {
  AddDevice("ens1f0np0", 2, /*with_rdma=*/false);
  std::string text = Render(*Sample());
  EXPECT_THAT(text, HasSubstr(kNoStormRx));
  EXPECT_THAT(text, HasSubstr("roce_pfc_storms_total{netdev=\"ens1f0np0\",prio=\"3\",direction="
                              "\"tx\"} 0"));
  EXPECT_THAT(text, Not(HasSubstr("prio=\"0\",direction=\"rx\",window")))
      << "no peak series for a priority without PFC";

  // Paused the whole interval, our tx on priority 3 frozen: stormed after one 250 ms interval.
  Traffic("ens1f0np0", /*tx_prio3_moves=*/false);
  Add("ens1f0np0", "rx_prio3_pause", 500);
  Add("ens1f0np0", "rx_prio3_pause_duration", 250000);
  text = Render(*Sample());
  EXPECT_THAT(text, HasSubstr(kStormRx));
  EXPECT_THAT(text, HasSubstr("roce_pfc_paused_ratio{netdev=\"ens1f0np0\",prio=\"3\",direction="
                              "\"rx\",window=\"15s\"} 1"));
  EXPECT_THAT(text, HasSubstr("roce_pfc_pause_rate_peak{netdev=\"ens1f0np0\",prio=\"3\","
                              "direction=\"rx\",window=\"1m\"} 2000"));
  EXPECT_THAT(text, HasSubstr("roce_pfc_storms_total{netdev=\"ens1f0np0\",prio=\"3\",direction="
                              "\"rx\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("roce_pfc_pauses_per_ecn_event")))
      << "no RDMA port: ECN unknown, not silent";

  // Traffic resumes: restored after the 400 ms restoration time, duration recorded.
  for (int i = 0; i < 2; ++i) {
    Traffic("ens1f0np0", /*tx_prio3_moves=*/true);
    Sample();
  }
  text = Render(*sampler_->Latest());
  EXPECT_THAT(text, HasSubstr(kNoStormRx));
  EXPECT_THAT(text, HasSubstr("roce_pfc_storm_last_duration_seconds{netdev=\"ens1f0np0\",prio="
                              "\"3\",direction=\"rx\"} 0.25"));
}

TEST_F(DeriveStageTest, IntervalsRunBetweenTheDevicesOwnReads) {
  AddDevice("ens1f0np0", 2, false);
  Sample();  // read at t0 (no cost)
  // The next read starts 250 ms later and takes 100 ms: its midpoint is t0 + 300 ms. The port was
  // paused half of that time. Timed from the sample's start (t0 + 250 ms) it would read as 0.6.
  ethtool_->clock = &clock_;
  ethtool_->cost = milliseconds(100);
  Traffic("ens1f0np0", true);
  Add("ens1f0np0", "rx_prio3_pause_duration", 150000);
  const std::string text = Render(*Sample());
  EXPECT_THAT(text, HasSubstr("roce_pfc_paused_ratio{netdev=\"ens1f0np0\",prio=\"3\",direction="
                              "\"rx\",window=\"15s\"} 0.5\n"));
}

TEST_F(DeriveStageTest, EcnSilenceNeedsTheBoundRdmaPort) {
  AddDevice("ens1f0np0", 2, /*with_rdma=*/true);
  Sample();  // opens RDMA netlink; its counters are read from the next sample on
  Sample();
  Traffic("ens1f0np0", true);
  Add("ens1f0np0", "tx_prio3_pause", 40);
  std::string text = Render(*Sample());
  // Pause sent without an ECN-marked packet received: the notification point is silent; nothing
  // was received paused, so the reaction point is not.
  EXPECT_THAT(text, HasSubstr("roce_ecn_silent{netdev=\"ens1f0np0\",window=\"1m\",role=\"np\"} 1"));
  EXPECT_THAT(text, HasSubstr("roce_ecn_silent{netdev=\"ens1f0np0\",window=\"1m\",role=\"rp\"} 0"));
  EXPECT_THAT(text, HasSubstr("roce_pfc_pauses_per_ecn_event{netdev=\"ens1f0np0\",window=\"1m\","
                              "role=\"np\"} 40"));

  Traffic("ens1f0np0", true);
  Add("ens1f0np0", "tx_prio3_pause", 40);
  AddRdma("mlx5_2/1", 3, 20);  // np_ecn_marked_roce_packets
  AddRdma("mlx5_2/1", 4, 10);  // np_cnp_sent
  text = Render(*Sample());
  EXPECT_THAT(text, HasSubstr("roce_ecn_silent{netdev=\"ens1f0np0\",window=\"1m\",role=\"np\"} 0"));
  EXPECT_THAT(text, HasSubstr("roce_pfc_pauses_per_ecn_event{netdev=\"ens1f0np0\",window=\"1m\","
                              "role=\"np\"} 4"));
  EXPECT_THAT(text, HasSubstr("roce_cnp_to_ecn_ratio{device=\"mlx5_2\",port=\"1\",window=\"15s\"}"
                              " 0.5"));
}

// Stands in for the QoS stage, which runs after the derive stage: publishes each device's DCB
// state with PFC on `observed_pfc`, or a failed DCB read, and the policy's `pfc:`.
class QosStateStage : public SampleStage {
 public:
  QosStateStage(std::optional<uint8_t> observed_pfc, std::optional<uint8_t> desired_pfc)
      : observed_pfc_(observed_pfc), desired_pfc_(desired_pfc) {}
  std::string_view Source() const override { return "qos"; }
  void Run(StageContext& /*ctx*/, Snapshot& draft) override {
    for (DeviceSnapshot& device : draft.devices) {
      auto state = std::make_shared<QosDeviceState>();
      if (observed_pfc_) {
        QosState dcb;
        dcb.pfc = PfcState{.cap = 8, .enabled_mask = *observed_pfc_, .mbc = 0, .delay = 0};
        state->observed.dcb = Observed<QosState>::Ok(dcb);
      } else {
        state->observed.dcb = Observed<QosState>::Failed("DCB read failed");
      }
      state->desired_pfc = desired_pfc_;
      device.qos = std::move(state);
    }
  }

 private:
  std::optional<uint8_t> observed_pfc_;
  std::optional<uint8_t> desired_pfc_;
};

// Review finding (issue 40): lossless priorities were always taken from the pause counters
// present, never from the QoS state that docs/signals.md names. PFC on priority 4, whose pause
// counters this port lacks, is lossless: it has a storm series; priority 3, whose counters are
// present but whose PFC is off, is not: its pauses are not compared with ECN.
TEST_F(DeriveStageTest, LosslessPrioritiesComeFromTheQosState) {
  sampler_->AddStage(std::make_unique<QosStateStage>(uint8_t{0x10}, std::nullopt));
  AddDevice("ens1f0np0", 2, /*with_rdma=*/true);
  Sample();
  Sample();  // the QoS state of the first sample is known from here on
  Traffic("ens1f0np0", true);
  Add("ens1f0np0", "tx_prio3_pause", 40);
  const std::string text = Render(*Sample());
  EXPECT_THAT(text,
              HasSubstr("roce_pfc_storm{netdev=\"ens1f0np0\",prio=\"4\",direction=\"rx\"} 0"));
  EXPECT_THAT(text, HasSubstr("roce_ecn_silent{netdev=\"ens1f0np0\",window=\"1m\",role=\"np\"} 0"))
      << "priority 3 has PFC off: its pause frames are not lossless";
}

TEST_F(DeriveStageTest, LosslessPrioritiesFallBackToThePolicyWhenDcbIsUnreadable) {
  sampler_->AddStage(std::make_unique<QosStateStage>(std::nullopt, uint8_t{0x08}));
  AddDevice("ens1f0np0", 2, /*with_rdma=*/true);
  Sample();
  Sample();
  Traffic("ens1f0np0", true);
  Add("ens1f0np0", "tx_prio3_pause", 40);
  const std::string text = Render(*Sample());
  EXPECT_THAT(text, HasSubstr("roce_ecn_silent{netdev=\"ens1f0np0\",window=\"1m\",role=\"np\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("roce_pfc_storm{netdev=\"ens1f0np0\",prio=\"4\"")));
}

TEST_F(DeriveStageTest, DeviceVanishingMidStormLeavesNoSeries) {
  AddDevice("ens1f0np0", 2, false);
  AddDevice("ens1f1np1", 3, false);
  Sample();
  Add("ens1f0np0", "rx_prio3_pause_duration", 250000);
  ASSERT_THAT(Render(*Sample()), HasSubstr(kStormRx));

  ethtool_->Remove("ens1f0np0");
  std::string text = Render(*Sample());
  EXPECT_THAT(text, Not(HasSubstr("netdev=\"ens1f0np0\"")));
  EXPECT_THAT(text, HasSubstr("roce_pfc_storm{netdev=\"ens1f1np1\""));
}

TEST_F(DeriveStageTest, FailedReadKeepsTheLastSignals) {
  AddDevice("ens1f0np0", 2, false);
  Sample();
  Add("ens1f0np0", "rx_prio3_pause_duration", 250000);
  ASSERT_THAT(Render(*Sample()), HasSubstr(kStormRx));
  ethtool_->entries.at("ens1f0np0").error = MakeError(EBUSY, "ETHTOOL_GSTATS: busy");
  std::string text = Render(*Sample());
  EXPECT_THAT(text, HasSubstr(kStormRx)) << "one failed read does not end a storm";
  EXPECT_THAT(text, Not(HasSubstr("roce_pfc_pause_frames_total{netdev=\"ens1f0np0\"")));
}

std::string_view EvidenceOf(const Snapshot& snapshot, const std::string& netdev) {
  for (const DeviceSnapshot& device : snapshot.devices) {
    if (device.device && device.device->name == netdev && device.derived) {
      return StormEvidenceName(device.derived->signals.storm_evidence);
    }
  }
  return "no derived signals";
}

TEST_F(DeriveStageTest, FailedReadCannotVouchThatNoStormBegan) {
  AddDevice("ens1f0np0", 2, false);
  Sample();
  Traffic("ens1f0np0", true);
  EXPECT_EQ(EvidenceOf(*Sample(), "ens1f0np0"), "unknown") << "250 ms of history";
  Traffic("ens1f0np0", true);
  ASSERT_EQ(EvidenceOf(*Sample(), "ens1f0np0"), "clear") << "500 ms of history";
  ethtool_->entries.at("ens1f0np0").error = MakeError(EBUSY, "ETHTOOL_GSTATS: busy");
  EXPECT_EQ(EvidenceOf(*Sample(), "ens1f0np0"), "unknown");
  ethtool_->entries.at("ens1f0np0").error.reset();
  Traffic("ens1f0np0", true);
  EXPECT_EQ(EvidenceOf(*Sample(), "ens1f0np0"), "clear") << "the longer interval was quiet";
}

const DeviceSignals* SignalsOf(const Snapshot& snapshot, const std::string& netdev) {
  for (const DeviceSnapshot& device : snapshot.devices) {
    if (device.device && device.device->name == netdev && device.derived) {
      return &device.derived->signals;
    }
  }
  return nullptr;
}

TEST_F(DeriveStageTest, EvidenceCarriesTheTimeOfTheReadItRestsOn) {
  AddDevice("ens1f0np0", 2, false);
  Sample();
  Traffic("ens1f0np0", true);
  Sample();
  Traffic("ens1f0np0", true);
  std::shared_ptr<const Snapshot> clear = Sample();  // 500 ms of quiet history
  const DeviceSignals* signals = SignalsOf(*clear, "ens1f0np0");
  ASSERT_NE(signals, nullptr);
  ASSERT_EQ(signals->storm_evidence, StormEvidence::kClear);
  EXPECT_EQ(signals->storm_evidence_read_at, clear->devices[0].ethtool->read_at);
  EXPECT_EQ(signals->storm_evidence_next_read, std::nullopt);
  // A failed read: the evidence still rests on the last good read, which a read now may renew.
  ethtool_->entries.at("ens1f0np0").error = MakeError(EBUSY, "ETHTOOL_GSTATS: busy");
  const nanoseconds failed_at = clock_.now;
  std::shared_ptr<const Snapshot> failed = Sample();
  signals = SignalsOf(*failed, "ens1f0np0");
  ASSERT_NE(signals, nullptr);
  EXPECT_EQ(signals->storm_evidence, StormEvidence::kUnknown);
  EXPECT_EQ(signals->storm_evidence_read_at, clear->devices[0].ethtool->read_at);
  EXPECT_EQ(signals->storm_evidence_next_read, failed_at);
}

TEST_F(DeriveStageTest, StringSetChangeIsOneDiscardedInterval) {
  AddDevice("ens1f0np0", 2, false);
  Sample();
  Sample();
  std::vector<std::string> names = Mlx5Names();
  names.push_back("rx_prio4_pause");
  ethtool_->SetNames("ens1f0np0", names);  // values restart at 0 with the new set
  std::string text = Render(*Sample());
  EXPECT_THAT(text, HasSubstr("roce_derived_intervals_discarded_total{netdev=\"ens1f0np0\","
                              "reason=\"identity_change\"} 1"));
  EXPECT_THAT(text, HasSubstr("roce_derived_intervals_discarded_total{netdev=\"ens1f0np0\","
                              "reason=\"counter_reset\"} 0"));
}

CliOutcome ParseFlags(std::vector<const char*> args, std::string* error = nullptr) {
  args.insert(args.begin(), "roce_qos_exporter");
  std::ostringstream out, err;
  CliOutcome outcome = ParseCommandLine(args, out, err);
  if (error) *error = err.str();
  return outcome;
}

TEST(DeriveFlagsTest, DefaultsFollowSonic) {
  CliOutcome o = ParseFlags({});
  ASSERT_EQ(o.kind, CliOutcome::Kind::kRunExporter);
  EXPECT_DOUBLE_EQ(o.config.derive.storm.threshold, 0.8);
  EXPECT_EQ(o.config.derive.storm.detection_time, milliseconds(200));
  EXPECT_EQ(o.config.derive.storm.restoration_time, milliseconds(400));
  EXPECT_EQ(o.config.derive.windows, (std::vector<std::chrono::seconds>{std::chrono::seconds(15),
                                                                        std::chrono::seconds(60)}));
}

TEST(DeriveFlagsTest, ParsesStormAndWindowFlags) {
  std::string error;
  CliOutcome o = ParseFlags(
      {"--storm.threshold=0.9", "--storm.detection-time=300ms", "--derive.windows=1m,10s,90s"},
      &error);
  ASSERT_EQ(o.kind, CliOutcome::Kind::kRunExporter) << error;
  EXPECT_DOUBLE_EQ(o.config.derive.storm.threshold, 0.9);
  EXPECT_EQ(o.config.derive.storm.restoration_time, milliseconds(600)) << "2 x detection";
  EXPECT_EQ(o.config.derive.windows,
            (std::vector<std::chrono::seconds>{std::chrono::seconds(10), std::chrono::seconds(60),
                                               std::chrono::seconds(90)}));
  o = ParseFlags({"--storm.detection-time=1s", "--storm.restoration-time=30s"}, &error);
  ASSERT_EQ(o.kind, CliOutcome::Kind::kRunExporter) << error;
  EXPECT_EQ(o.config.derive.storm.restoration_time, milliseconds(30000));
}

TEST(DeriveFlagsTest, TheStormGuardsGapBoundIsTwoSamplerPeriods) {
  std::string error;
  CliOutcome o = ParseFlags({}, &error);
  ASSERT_EQ(o.kind, CliOutcome::Kind::kRunExporter) << error;
  EXPECT_EQ(o.config.derive.max_read_gap, milliseconds(500));
  o = ParseFlags({"--sampler.period=1s"}, &error);
  ASSERT_EQ(o.kind, CliOutcome::Kind::kRunExporter) << error;
  EXPECT_EQ(o.config.derive.max_read_gap, milliseconds(2000));
}

TEST(DeriveFlagsTest, RejectsValuesOutsideTheirRanges) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{"--storm.threshold=1.5"}, "--storm.threshold"},
      {{"--storm.threshold=0"}, "--storm.threshold"},
      {{"--storm.detection-time=50ms"}, "--storm.detection-time"},
      {{"--storm.detection-time=6s"}, "--storm.detection-time"},
      {{"--storm.detection-time=soon"}, "--storm.detection-time"},
      {{"--storm.restoration-time=61s"}, "--storm.restoration-time"},
      {{"--derive.windows=1500ms"}, "--derive.windows"},
      {{"--derive.windows=6m"}, "--derive.windows"},
      {{"--derive.windows=15s,15s"}, "--derive.windows"},
      {{"--derive.windows=1s,2s,3s,4s,5s"}, "--derive.windows"},
      {{"--derive.windows="}, "--derive.windows"},
  };
  for (const auto& [args, flag] : cases) {
    std::string error;
    CliOutcome o = ParseFlags(args, &error);
    EXPECT_EQ(o.kind, CliOutcome::Kind::kExit) << args[0];
    EXPECT_EQ(o.exit_code, kExitUsage) << args[0];
    EXPECT_THAT(error, HasSubstr(flag)) << args[0];
  }
}

}  // namespace
}  // namespace roceqos
