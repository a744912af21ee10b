#include "exporter/sampling/sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <sstream>

#include "collectors/discovery.h"
#include "exporter/core/logging.h"
#include "exporter/render/metrics.h"
#include "tests/unit/support/captured_log.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/sampler_fixture.h"

namespace roceqos {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using testing::FakeClock;
using testing::FakeEthtool;
using testing::FakeInventory;
using testing::FakeRdma;
using ::testing::HasSubstr;
using testing::MakeCounters;
using testing::MakeDevice;
using testing::MakePort;
using ::testing::Not;
using testing::Render;
using SamplerTest = testing::SamplerFixture;

TEST_F(SamplerTest, PublishesSnapshotsOfTheSelectedDevices) {
  Build();
  AddDevice(MakeDevice("ens1f1np1", 3), {"rx_prio3_pause", "tx_prio3_pause", "rx_bytes"});
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause", "tx_prio3_pause"});
  AddDevice(MakeDevice("veth0", 4, "veth"), {"peer_ifindex"});
  ethtool_->SetValue("ens1f0np0", "rx_prio3_pause", 42);

  EXPECT_EQ(sampler_->Latest(), nullptr);
  std::shared_ptr<const Snapshot> s = Sample();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->sequence, 1u);
  ASSERT_EQ(s->devices.size(), 2u) << "veth0 is not selected by default";
  EXPECT_EQ(s->devices[0].device->name, "ens1f0np0") << "sorted by name";
  ASSERT_TRUE(s->devices[0].ethtool.has_value());
  EXPECT_EQ(s->devices[0].ethtool->counters.values[0], 42u);
  EXPECT_EQ(s->devices[0].ethtool->mapped->size(), 2u);
  EXPECT_EQ(ethtool_->calls.count("veth0"), 0u) << "unselected devices are never read";

  ethtool_->SetValue("ens1f0np0", "rx_prio3_pause", 43);
  std::shared_ptr<const Snapshot> s2 = Sample();
  EXPECT_EQ(s2->sequence, 2u);
  EXPECT_EQ(s2->devices[0].ethtool->counters.values[0], 43u);
  EXPECT_EQ(s->devices[0].ethtool->counters.values[0], 42u) << "published snapshots are immutable";
  EXPECT_EQ(s2->devices[0].device, s->devices[0].device) << "unchanged devices are shared";
  EXPECT_EQ(ethtool_->calls["ens1f0np0"], 2) << "one GSTATS per device per sample";
  EXPECT_EQ(inventory_->calls, 1) << "discovery is not per sample";
}

TEST_F(SamplerTest, IncludeAndExcludeRegexesOverrideTheDefaultSelection) {
  SamplerOptions options;
  options.device_include = std::regex("veth.*|ens.*");
  options.device_exclude = std::regex("ens1f1.*");
  Build(std::move(options));
  AddDevice(MakeDevice("ens1f0np0", 2), {"a"});
  AddDevice(MakeDevice("ens1f1np1", 3), {"a"});
  AddDevice(MakeDevice("veth0", 4, "veth"), {"a"});
  AddDevice(MakeDevice("xveth0", 5, "veth"), {"a"});
  std::shared_ptr<const Snapshot> s = Sample();
  std::vector<std::string> names;
  for (const auto& d : s->devices) names.push_back(d.device->name);
  EXPECT_THAT(names, ::testing::ElementsAre("ens1f0np0", "veth0")) << "full-match regexes";
}

TEST_F(SamplerTest, DeviceVanishingBetweenSamplesRemovesItsSeriesAtOnce) {
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  AddDevice(MakeDevice("ens1f1np1", 3), {"rx_prio3_pause"});
  ASSERT_THAT(Render(*Sample()), HasSubstr("netdev=\"ens1f1np1\""));

  // The netdev is deleted; discovery has not run since, so the sampler still tries to read it.
  ethtool_->Remove("ens1f1np1");
  std::shared_ptr<const Snapshot> s = Sample();
  ASSERT_EQ(s->devices.size(), 1u);
  EXPECT_EQ(s->devices[0].device->name, "ens1f0np0") << "the other device is unaffected";
  EXPECT_THAT(Render(*s), Not(HasSubstr("ens1f1np1")));
  EXPECT_EQ((s->errors.at({"ethtool", ErrorReason::kDeviceGone})), 1u);

  // The vanished device triggers a discovery on the next sample, which forgets it for good.
  inventory_->inventory.devices.pop_back();
  const int discoveries = inventory_->calls;
  s = Sample();
  EXPECT_EQ(inventory_->calls, discoveries + 1);
  EXPECT_EQ(ethtool_->calls["ens1f1np1"], 2) << "forgotten: not read again";
  EXPECT_EQ(s->devices.size(), 1u);
  EXPECT_EQ((s->errors.at({"ethtool", ErrorReason::kDeviceGone})), 1u) << "not read again";

  // Re-created: found again by the next periodic discovery.
  AddDevice(MakeDevice("ens1f1np1", 7), {"rx_prio3_pause"});
  clock_.now += seconds(5);
  s = Sample();
  EXPECT_NE(s->FindDevice("ens1f1np1"), nullptr);
  EXPECT_EQ(s->FindDevice("ens1f1np1")->device->ifindex, 7);
}

TEST_F(SamplerTest, ErroringSourceCountsTheErrorAndDoesNotStopOtherDevices) {
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  AddDevice(MakeDevice("ens1f1np1", 3), {"rx_prio3_pause"});
  ethtool_->entries["ens1f0np0"].error = MakeError(EIO, "ETHTOOL_GSTATS ens1f0np0: I/O error");
  ethtool_->SetValue("ens1f1np1", "rx_prio3_pause", 5);
  std::shared_ptr<const Snapshot> s = Sample();
  ASSERT_EQ(s->devices.size(), 2u) << "a failed read does not mean the device is gone";
  EXPECT_FALSE(s->FindDevice("ens1f0np0")->ethtool.has_value());
  ASSERT_TRUE(s->FindDevice("ens1f1np1")->ethtool.has_value());
  EXPECT_EQ(s->FindDevice("ens1f1np1")->ethtool->counters.values[0], 5u);
  EXPECT_EQ((s->errors.at({"ethtool", ErrorReason::kOther})), 1u);
  s = Sample();
  EXPECT_EQ((s->errors.at({"ethtool", ErrorReason::kOther})), 2u);
  const std::string text = Render(*s);
  EXPECT_THAT(
      text, HasSubstr("roce_exporter_collect_errors_total{source=\"ethtool\",reason=\"other\"} 2"));
  EXPECT_THAT(text, Not(HasSubstr("roce_pfc_pause_frames_total{netdev=\"ens1f0np0\"")));

  // EOPNOTSUPP means "no statistics", not a failure.
  ethtool_->entries["ens1f0np0"].error = MakeError(EOPNOTSUPP, "no stats");
  s = Sample();
  EXPECT_EQ(s->errors.count({"ethtool", ErrorReason::kNotSupported}), 0u);
}

TEST_F(SamplerTest, AThrowingSourceIsCountedAsExceptionAndSamplingGoesOn) {
  class ThrowingEthtool : public EthtoolIo {
   public:
    Result<uint32_t> StatsCount(const std::string&) override { throw std::bad_alloc(); }
    Result<std::vector<std::string>> StatsNames(const std::string&, uint32_t) override {
      throw std::bad_alloc();
    }
    Result<std::vector<uint64_t>> StatsValues(const std::string&, uint32_t) override {
      throw std::bad_alloc();
    }
    Result<DriverInfo> GetDriverInfo(const std::string&) override { throw std::bad_alloc(); }
  };
  SamplerSources sources;
  auto inventory = std::make_unique<FakeInventory>();
  inventory->inventory.devices.push_back(MakeDevice("ens1f0np0", 2));
  sources.inventory = std::move(inventory);
  sources.ethtool = std::make_unique<ThrowingEthtool>();
  sources.selected_by_default = [](const Device&) { return true; };
  Sampler sampler({}, std::move(sources), clock_.AsClock());
  sampler.SampleOnce();
  sampler.SampleOnce();
  EXPECT_EQ((sampler.Latest()->errors.at({"ethtool", ErrorReason::kException})), 2u);
  EXPECT_EQ(sampler.Latest()->devices.size(), 1u);
}

TEST_F(SamplerTest, BudgetOverrunLengthensThePeriodAndTheMetricSaysSo) {
  SamplerOptions options;
  options.period = milliseconds(250);
  options.budget = 0.5;
  Build(std::move(options));
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  AddDevice(MakeDevice("ens1f1np1", 3), {"rx_prio3_pause"});
  ethtool_->cost = milliseconds(80);  // 160ms per sample > 125ms budget

  std::shared_ptr<const Snapshot> s = Sample();
  EXPECT_DOUBLE_EQ(s->sampler.last_kernel_seconds, 0.160);
  EXPECT_DOUBLE_EQ(s->sampler.effective_period_seconds, 0.5);
  EXPECT_DOUBLE_EQ(s->sampler.configured_period_seconds, 0.25);
  EXPECT_EQ(s->sampler.overruns, 1u);
  std::string text = Render(*s);
  EXPECT_THAT(text, HasSubstr("roce_exporter_sample_period_seconds 0.5\n"));
  EXPECT_THAT(text, HasSubstr("roce_exporter_configured_sample_period_seconds 0.25\n"));
  EXPECT_THAT(text, HasSubstr("roce_exporter_sample_overruns_total 1\n"));

  // Fits the 250ms budget of the 500ms period: stays there, no further overrun.
  for (int i = 0; i < 20; ++i) s = Sample();
  EXPECT_DOUBLE_EQ(s->sampler.effective_period_seconds, 0.5);
  EXPECT_EQ(s->sampler.overruns, 1u);

  // Load drops: back to the configured period after the calm samples.
  ethtool_->cost = milliseconds(1);
  for (int i = 0; i < PeriodController::kCalmSamples; ++i) s = Sample();
  EXPECT_DOUBLE_EQ(s->sampler.effective_period_seconds, 0.25);
  EXPECT_THAT(Render(*s), HasSubstr("roce_exporter_sample_period_seconds 0.25\n"));
}

TEST_F(SamplerTest, DiscoveryIsExcludedFromTheBudgetButReportedAsItsOwnSource) {
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  inventory_->cost = milliseconds(400);
  ethtool_->cost = milliseconds(10);
  std::shared_ptr<const Snapshot> s = Sample();
  EXPECT_EQ(s->sampler.overruns, 0u);
  EXPECT_DOUBLE_EQ(s->sources.at("discovery").last_duration_seconds, 0.4);
  EXPECT_DOUBLE_EQ(s->sources.at("ethtool").last_duration_seconds, 0.01);
}

TEST_F(SamplerTest, DiscoveryRunsAtItsOwnCadence) {
  SamplerOptions options;
  options.discovery_interval = seconds(5);
  Build(std::move(options));
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  for (int i = 0; i < 20; ++i) Sample();  // 20 × 250ms = 5s
  EXPECT_EQ(inventory_->calls, 1);
  Sample();
  EXPECT_EQ(inventory_->calls, 2);
  sampler_->RequestDiscovery();
  Sample();
  EXPECT_EQ(inventory_->calls, 3) << "on demand";
}

TEST_F(SamplerTest, NothingSelectedIsWarnedOnTransitionOnlyAndExported) {
  CapturedLog log;
  SamplerOptions options;
  options.discovery_interval = seconds(5);
  options.device_include = std::regex("ens9.*");
  options.device_include_text = "ens9.*";
  Build(std::move(options));
  AddDevice(MakeDevice("ens1f0np0", 2), {"a"});
  AddDevice(MakeDevice("veth0", 4, "veth"), {"a"});

  EXPECT_THAT(Render(*Sample()), HasSubstr("roce_exporter_selected_devices 0\n"));
  std::string first = log.Take();
  EXPECT_THAT(first, HasSubstr("no device selected"));
  EXPECT_THAT(first, HasSubstr("include=ens9.*"));
  EXPECT_THAT(first, HasSubstr("candidates=2"));

  sampler_->RequestDiscovery();  // a rediscovery within the interval: no second line
  Sample();
  EXPECT_EQ(inventory_->calls, 2);
  EXPECT_THAT(log.Take(), Not(HasSubstr("no device selected")));

  for (int i = 0; i < 80; ++i) Sample();  // four more scheduled discoveries, 5 s apart
  EXPECT_EQ(inventory_->calls, 6);
  EXPECT_THAT(log.Take(), Not(HasSubstr("no device selected")));  // still empty: nothing new

  AddDevice(MakeDevice("ens9f0np0", 6), {"a"});
  sampler_->RequestDiscovery();
  EXPECT_THAT(Render(*Sample()), HasSubstr("roce_exporter_selected_devices 1\n"));
  std::string recovered = log.Take();
  EXPECT_THAT(recovered, Not(HasSubstr("no device selected")));
  EXPECT_THAT(recovered, HasSubstr("devices selected"));
  EXPECT_THAT(recovered, HasSubstr("selected=1"));

  inventory_->inventory.devices.pop_back();  // ens9f0np0 gone: empty again, warned again
  sampler_->RequestDiscovery();
  Sample();
  EXPECT_THAT(log.Take(), HasSubstr("no device selected"));
}

TEST_F(SamplerTest, FailedDiscoveryKeepsTheDevicesFoundBefore) {
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  Sample();
  inventory_->error = MakeError(ENOBUFS, "RTM_GETLINK dump: No buffer space available");
  sampler_->RequestDiscovery();
  std::shared_ptr<const Snapshot> s = Sample();
  EXPECT_EQ(s->devices.size(), 1u);
  EXPECT_EQ((s->errors.at({"discovery", ErrorReason::kOther})), 1u);
}

TEST_F(SamplerTest, ReadsEachBoundRdmaPortOnceAndExportsItsCounters) {
  rdma_counters_["mlx5_bond_0/1"] =
      MakeCounters({"out_of_sequence", "np_cnp_sent", "rp_cnp_handled"}, {1, 2, 3});
  Build();
  Device bond = MakeDevice("bond0", 10);
  bond.role = DeviceRole::kBond;
  bond.rdma_ports.push_back(MakePort("mlx5_bond_0", 1, "bond0"));
  Device member = MakeDevice("ens1f0np0", 2);
  member.rdma_ports.push_back(MakePort("mlx5_bond_0", 1, "bond0"));  // LAG: listed twice
  AddDevice(bond, {"rx_prio3_pause"});
  AddDevice(member, {"rx_prio3_pause"});
  std::shared_ptr<const Snapshot> s = Sample();
  ASSERT_NE(rdma_, nullptr);
  EXPECT_EQ(rdma_->calls["mlx5_bond_0/1"], 1);
  const std::string text = Render(*s);
  EXPECT_THAT(text, HasSubstr("roce_cnp_sent_total{device=\"mlx5_bond_0\",port=\"1\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("roce_cnp_handled_total{device=\"mlx5_bond_0\",port=\"1\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("roce_rdma_hw_stat_total{device=\"mlx5_bond_0\",port=\"1\","
                              "stat=\"out_of_sequence\"} 1\n"));
  EXPECT_TRUE(s->sources.at("rdma").available);
}

TEST_F(SamplerTest, MissingRdmaNetlinkIsReportedUnavailableNotCountedPerSample) {
  Build({}, /*rdma_opens=*/false);
  Device d = MakeDevice("ens1f0np0", 2);
  d.rdma_ports.push_back(MakePort("mlx5_0", 1, "ens1f0np0"));
  AddDevice(d, {"rx_prio3_pause"});
  std::shared_ptr<const Snapshot> s;
  for (int i = 0; i < 10; ++i) s = Sample();
  EXPECT_FALSE(s->sources.at("rdma").available);
  EXPECT_EQ(rdma_opens_, 1) << "retried at the discovery cadence, not per sample";
  EXPECT_TRUE(s->errors.empty());
  EXPECT_TRUE(s->devices[0].ethtool.has_value()) << "ethtool works without RDMA";
  EXPECT_THAT(Render(*s), HasSubstr("roce_exporter_source_available{source=\"rdma\"} 0\n"));

  // Discovery says the kernel has no RDMA netlink at all: not even an open attempt.
  inventory_->inventory.rdma_netlink_available = false;
  sampler_->RequestDiscovery();
  Sample();
  EXPECT_EQ(rdma_opens_, 1);
}

// The real Discovery (this host's netdevs) with a scripted RDMA listing, through the sampler to
// the exposition: what an operator sees while RDMA netlink dumps keep failing.
class ScriptedPorts final : public RdmaCollector {
 public:
  explicit ScriptedPorts(const bool* fail) : fail_(fail) {}
  Result<std::vector<RdmaPort>> ListPorts() override {
    if (*fail_) return MakeError(EINTR, "RDMA_NLDEV_CMD_PORT_GET dump: interrupted");
    RdmaPort port = MakePort("mlx5_0", 1, "lo");
    port.netdev_index = 1;  // RDMA_NLDEV_ATTR_NDEV_INDEX: lo is ifindex 1 in every netns
    return std::vector<RdmaPort>{port};
  }
  Result<CounterSet> ReadCounters(const RdmaPort&) override {
    return MakeError(EOPNOTSUPP, "not read here");
  }

 private:
  const bool* fail_;
};

class DiscoveryInventory final : public InventorySource {
 public:
  explicit DiscoveryInventory(std::unique_ptr<Discovery> d) : discovery_(std::move(d)) {}
  Result<Inventory> Discover() override { return discovery_->Discover(); }

 private:
  std::unique_ptr<Discovery> discovery_;
};

TEST_F(SamplerTest, AFailingRdmaListingKeepsThePortsBoundedAndTheStaleGaugeSaysSo) {
  bool fail = false;
  auto discovery = std::make_unique<Discovery>(
      "/nonexistent", [&fail]() -> Result<std::unique_ptr<RdmaCollector>> {
        return std::unique_ptr<RdmaCollector>(std::make_unique<ScriptedPorts>(&fail));
      });
  discovery->SetClock([this] { return std::chrono::steady_clock::time_point(clock_.now); });
  SamplerOptions options;
  options.device_include = std::regex("lo");
  Build(std::move(options), true, std::make_unique<DiscoveryInventory>(std::move(discovery)));
  ethtool_->SetNames("lo", {"rx_prio3_pause"});
  auto ports_of_lo = [](const Snapshot& s) {
    const DeviceSnapshot* lo = s.FindDevice("lo");
    return lo ? lo->device->rdma_ports.size() : size_t{99};
  };
  std::shared_ptr<const Snapshot> s = Sample();
  EXPECT_EQ(ports_of_lo(*s), 1u);
  EXPECT_THAT(Render(*s), HasSubstr("roce_exporter_rdma_ports_stale 0\n"));

  fail = true;
  clock_.now += seconds(20);
  sampler_->RequestDiscovery();
  s = Sample();
  EXPECT_EQ(ports_of_lo(*s), 1u) << "the last good ports are kept";
  EXPECT_THAT(Render(*s), HasSubstr("roce_exporter_rdma_ports_stale 1\n"));
  EXPECT_GE((s->errors.at({"rdma", ErrorReason::kBusy})), 1u) << "and the failure is still counted";

  clock_.now += kRdmaPortsKeep;
  sampler_->RequestDiscovery();
  s = Sample();
  EXPECT_EQ(ports_of_lo(*s), 0u) << "not forever";
  EXPECT_THAT(Render(*s), HasSubstr("roce_exporter_rdma_ports_stale 0\n"));

  fail = false;
  sampler_->RequestDiscovery();
  s = Sample();
  EXPECT_EQ(ports_of_lo(*s), 1u) << "back with the next good listing";
}

TEST_F(SamplerTest, StagesFillExtensionPointsAndChargeTheBudget) {
  class CountingStage : public SampleStage {
   public:
    explicit CountingStage(FakeClock& clock) : clock_(clock) {}
    std::string_view Source() const override { return "qos"; }
    void Run(StageContext& ctx, Snapshot& draft) override {
      clock_.now += milliseconds(3);
      ctx.kernel_time = milliseconds(200);
      ctx.errors.push_back(ErrorReason::kPermission);
      seen_devices = draft.devices.size();
      had_previous = ctx.previous != nullptr;
    }
    FakeClock& clock_;
    size_t seen_devices = 0;
    bool had_previous = false;
  };
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  auto stage = std::make_unique<CountingStage>(clock_);
  CountingStage* raw = stage.get();
  sampler_->AddStage(std::move(stage));
  std::shared_ptr<const Snapshot> s = Sample();
  EXPECT_EQ(raw->seen_devices, 1u);
  EXPECT_FALSE(raw->had_previous);
  EXPECT_DOUBLE_EQ(s->sources.at("qos").last_duration_seconds, 0.003);
  EXPECT_EQ((s->errors.at({"qos", ErrorReason::kPermission})), 1u);
  EXPECT_EQ(s->sampler.overruns, 1u) << "stage kernel time counts against the budget";
  Sample();
  EXPECT_TRUE(raw->had_previous);
}

TEST_F(SamplerTest, PerPortScheduleReadsMovingPortsAndCarriesIdleOnesForward) {
  SamplerOptions options;
  options.idle_period = std::chrono::seconds(1);
  Build(std::move(options));
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  AddDevice(MakeDevice("ens1f1np1", 3), {"rx_prio3_pause"});
  std::shared_ptr<const Snapshot> first = Sample();  // both read: first reads count as moving
  ethtool_->SetValue("ens1f0np0", "rx_prio3_pause", 1);
  std::shared_ptr<const Snapshot> second = Sample();  // t = 250 ms: the fast class is due
  ASSERT_EQ(ethtool_->calls["ens1f0np0"], 2);
  ASSERT_EQ(ethtool_->calls["ens1f1np1"], 2);
  // ens1f1np1 did not move: idle, read with the idle class only; ens1f0np0 moved: 250 ms.
  ethtool_->SetValue("ens1f0np0", "rx_prio3_pause", 2);
  EXPECT_TRUE(sampler_->WorkDue());
  std::shared_ptr<const Snapshot> third = Sample();
  EXPECT_EQ(ethtool_->calls["ens1f0np0"], 3);
  EXPECT_EQ(ethtool_->calls["ens1f1np1"], 2) << "idle: not read at 500 ms";
  ASSERT_EQ(third->devices.size(), 2u) << "a port not read keeps its series";
  EXPECT_EQ(third->devices[1].ethtool->read_at, second->devices[1].ethtool->read_at)
      << "carried forward: the same read, no new interval";
  EXPECT_EQ(third->devices[0].ethtool->counters.values[0], 2u);
  // Nothing moves any more: at 750 ms ens1f0np0 is read and found idle, at 1 s the idle class
  // (both ports) is due; a wake before the next idle period has nothing to do.
  Sample();
  Sample();
  EXPECT_EQ(ethtool_->calls["ens1f0np0"], 5);
  EXPECT_EQ(ethtool_->calls["ens1f1np1"], 3);
  EXPECT_FALSE(sampler_->WorkDue()) << "1.25 s: nothing due";
  const uint64_t samples = sampler_->Latest()->sequence;
  clock_.now += milliseconds(750);
  EXPECT_TRUE(sampler_->WorkDue());
  Sample();
  EXPECT_EQ(sampler_->Latest()->sequence, samples + 1);
  EXPECT_EQ(ethtool_->calls["ens1f1np1"], 4);
  EXPECT_EQ(ethtool_->calls["ens1f0np0"], 6) << "both idle, read in one wake";
}

TEST_F(SamplerTest, PerPortScheduleKeepsAPortWhoseCnpCountersMoveInTheFastClass) {
  rdma_counters_["mlx5_0/1"] = MakeCounters({"np_cnp_sent"}, {1});
  SamplerOptions options;
  options.idle_period = std::chrono::seconds(1);
  Build(std::move(options));
  Device device = MakeDevice("ens1f0np0", 2);
  device.rdma_ports.push_back(MakePort("mlx5_0", 1, "ens1f0np0"));
  AddDevice(device, {"rx_prio3_pause"});
  Sample();  // t = 0: the first read of both
  ASSERT_NE(rdma_, nullptr);
  rdma_->counters["mlx5_0/1"] = MakeCounters({"np_cnp_sent"}, {5});
  // 250 ms: the pause counter did not move, so the RDMA counters are read for their resting
  // values, and they moved: RoCE traffic, the port stays in the fast class.
  Sample();
  ASSERT_EQ(rdma_->calls["mlx5_0/1"], 2);
  std::shared_ptr<const Snapshot> third = Sample();  // 500 ms
  EXPECT_EQ(ethtool_->calls["ens1f0np0"], 3) << "fast class, not the 1 s idle one";
  EXPECT_EQ(rdma_->calls["mlx5_0/1"], 2) << "RDMA every 2 s while moving, not every read";
  ASSERT_EQ(third->devices.size(), 1u);
  ASSERT_EQ(third->devices[0].rdma.size(), 1u) << "carried forward";
  EXPECT_EQ(third->devices[0].rdma[0].counters.values[0], 5u);
}

TEST_F(SamplerTest, PerPortScheduleReadsAPortWithoutPauseCountersAtTheFastPeriod) {
  SamplerOptions options;
  options.idle_period = std::chrono::seconds(1);
  Build(std::move(options));
  // No pause or per-priority counters (a veth): nothing says it is idle.
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_bytes"});
  Sample();
  Sample();
  Sample();
  EXPECT_EQ(ethtool_->calls["ens1f0np0"], 3);
}

TEST_F(SamplerTest, RequestedReadOfAnIdlePortReadsThatPortOnly) {
  SamplerOptions options;
  options.idle_period = std::chrono::seconds(1);
  Build(std::move(options));
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  AddDevice(MakeDevice("ens1f1np1", 3), {"rx_prio3_pause"});
  Sample();
  std::shared_ptr<const Snapshot> before = Sample();  // 250 ms: neither moved, idle until 1 s
  ASSERT_FALSE(sampler_->WorkDue());
  const nanoseconds read_before = before->devices[1].ethtool->read_at;
  sampler_->RequestRead("ens1f1np1");
  EXPECT_TRUE(sampler_->WorkDue()) << "an idle port asked for is due at once";
  std::shared_ptr<const Snapshot> asked = Sample();
  EXPECT_EQ(ethtool_->calls["ens1f1np1"], 3);
  EXPECT_EQ(ethtool_->calls["ens1f0np0"], 2) << "not every port, unlike a Wake";
  EXPECT_GT(asked->devices[1].ethtool->read_at, read_before) << "a new read, not carried forward";
  EXPECT_EQ(asked->devices[0].ethtool->read_at, before->devices[0].ethtool->read_at);
  EXPECT_FALSE(sampler_->WorkDue()) << "asked once, read once";
  // A read asked for later is due then, not before (the idle class is due at 1 s); a netdev not
  // selected is ignored.
  const nanoseconds at = clock_.now + milliseconds(200);
  sampler_->RequestRead("ens1f0np0", at);
  sampler_->RequestRead("eth9");
  EXPECT_FALSE(sampler_->WorkDue());
  clock_.now = at;
  EXPECT_TRUE(sampler_->WorkDue());
  Sample();
  EXPECT_EQ(ethtool_->calls["ens1f0np0"], 3);
  EXPECT_EQ(ethtool_->calls["ens1f1np1"], 3);
  EXPECT_EQ(ethtool_->calls.count("eth9"), 0u);
}

// Sources with one selected netdev, for the tests of the sampler's own thread (real clock).
SamplerSources OneDeviceSources(FakeInventory** inventory_out = nullptr) {
  auto inventory = std::make_unique<FakeInventory>();
  inventory->inventory.devices.push_back(MakeDevice("ens1f0np0", 2));
  if (inventory_out != nullptr) *inventory_out = inventory.get();
  auto ethtool = std::make_unique<FakeEthtool>();
  ethtool->SetNames("ens1f0np0", {"rx_prio3_pause"});
  SamplerSources sources;
  sources.inventory = std::move(inventory);
  sources.ethtool = std::move(ethtool);
  sources.selected_by_default = [](const Device&) { return true; };
  return sources;
}

TEST(SamplerThread, PublishesRepeatedlyAndStopsCleanly) {
  SamplerSources sources = OneDeviceSources();
  SamplerOptions options;
  options.period = milliseconds(10);
  Sampler sampler(std::move(options), std::move(sources));
  sampler.Start();
  EXPECT_TRUE(sampler.WaitForSequence(3, std::chrono::steady_clock::now() + seconds(10)));
  sampler.Stop();
  const uint64_t stopped_at = sampler.Latest()->sequence;
  EXPECT_GE(stopped_at, 3u);
  EXPECT_FALSE(
      sampler.WaitForSequence(stopped_at + 1, std::chrono::steady_clock::now() + milliseconds(50)))
      << "no sample after Stop()";
}

TEST(SamplerThread, WakeSamplesAtOnceWithADiscovery) {
  FakeInventory* inventory_ptr = nullptr;
  SamplerSources sources = OneDeviceSources(&inventory_ptr);
  SamplerOptions options;
  options.period = std::chrono::minutes(1);  // the periodic sample cannot come during the test
  options.discovery_interval = std::chrono::minutes(1);
  Sampler sampler(std::move(options), std::move(sources));
  sampler.Start();
  ASSERT_TRUE(sampler.WaitForSequence(1, std::chrono::steady_clock::now() + seconds(10)));
  sampler.Wake(/*discovery=*/true);
  EXPECT_TRUE(sampler.WaitForSequence(2, std::chrono::steady_clock::now() + seconds(10)));
  sampler.Stop();
  EXPECT_EQ(inventory_ptr->calls, 2) << "the wake-up asked for a discovery";
}

TEST(SamplerThread, RequestReadWakesTheSamplerForThatPort) {
  FakeInventory* inventory_ptr = nullptr;
  SamplerSources sources = OneDeviceSources(&inventory_ptr);
  SamplerOptions options;
  // Neither the periodic nor the idle wake can come during the test.
  options.period = std::chrono::minutes(1);
  options.idle_period = std::chrono::minutes(1);
  options.discovery_interval = std::chrono::minutes(1);
  Sampler sampler(std::move(options), std::move(sources));
  sampler.Start();
  ASSERT_TRUE(sampler.WaitForSequence(1, std::chrono::steady_clock::now() + seconds(10)));
  const auto first = sampler.Latest()->devices.at(0).ethtool->read_at;
  sampler.RequestRead("ens1f0np0");
  ASSERT_TRUE(sampler.WaitForSequence(2, std::chrono::steady_clock::now() + seconds(10)));
  sampler.Stop();
  EXPECT_GT(sampler.Latest()->devices.at(0).ethtool->read_at, first);
  EXPECT_EQ(inventory_ptr->calls, 1) << "a read request is no discovery";
}

TEST(SamplerThread, StageAsksForAnEarlierSample) {
  // Asks for the next sample 20 ms after the first one, once; the periodic one is a minute away.
  class SuspiciousStage : public SampleStage {
   public:
    std::string_view Source() const override { return "derive"; }
    void Run(StageContext& ctx, Snapshot&) override {
      if (runs++ == 0) ctx.sample_again_at = ctx.now + milliseconds(20);
    }
    std::atomic<int> runs = 0;
  };
  SamplerSources sources = OneDeviceSources();
  SamplerOptions options;
  options.period = std::chrono::minutes(1);
  Sampler sampler(std::move(options), std::move(sources));
  auto stage = std::make_unique<SuspiciousStage>();
  SuspiciousStage* raw = stage.get();
  sampler.AddStage(std::move(stage));
  sampler.Start();
  EXPECT_TRUE(sampler.WaitForSequence(2, std::chrono::steady_clock::now() + seconds(10)))
      << "the requested sample came";
  EXPECT_FALSE(sampler.WaitForSequence(3, std::chrono::steady_clock::now() + milliseconds(200)))
      << "a request is honoured once; the cadence then restarts from that sample";
  sampler.Stop();
  EXPECT_EQ(raw->runs.load(), 2);
}

}  // namespace
}  // namespace roceqos
