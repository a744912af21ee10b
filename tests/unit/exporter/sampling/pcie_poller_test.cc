#include "exporter/sampling/pcie_poller.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "exporter/render/metrics.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/gpu_topology_fixture.h"
#include "tests/unit/support/metric_families.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// What /metrics would serve for `state` with `netdevs` selected.
Families Render(const std::shared_ptr<const PcieState>& state,
                const std::vector<std::string>& netdevs) {
  Snapshot snapshot;
  for (const std::string& netdev : netdevs) {
    DeviceSnapshot device;
    device.device = std::make_shared<const Device>(testing::MakeDevice(netdev, 2));
    snapshot.devices.push_back(std::move(device));
  }
  snapshot.pcie = state;
  return RenderSnapshot(&snapshot);
}

// Two mlx5 functions under one root port, as /sys lays them out, and a veth.
class PciePollerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("roceqos_pciepoll_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    bridge_ = root_ / "devices/pci0000:00/0000:00:02.0";
    fs::create_directories(root_ / "class/net");
    AddFunction("0000:3b:00.0", "eth0");
    AddFunction("0000:3b:00.1", "eth1");
    fs::create_directories(root_ / "devices/virtual/net/veth0");
    fs::create_symlink("../../devices/virtual/net/veth0", root_ / "class/net/veth0");
    Write(bridge_ / "max_link_speed", "16.0 GT/s PCIe\n");
    Write(bridge_ / "aer_dev_fatal", "TOTAL_ERR_FATAL 0\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  void AddFunction(const std::string& bdf, const std::string& netdev) {
    const fs::path function = bridge_ / bdf;
    fs::create_directories(function / "net" / netdev);
    fs::create_symlink("../../../" + bdf, function / "net" / netdev / "device");
    fs::create_symlink(fs::relative(function / "net" / netdev, root_ / "class/net"),
                       root_ / "class/net" / netdev);
    Write(function / "current_link_speed", "16.0 GT/s PCIe\n");
    Write(function / "current_link_width", "16\n");
    Write(function / "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL 0\n");
  }
  static void Write(const fs::path& p, std::string_view content) { std::ofstream(p) << content; }

  PciePoller MakePoller() {
    return PciePoller({.interval = std::chrono::seconds(30), .sysfs_root = root_.string()},
                      [this] { return netdevs_; });
  }

  fs::path root_, bridge_;
  std::vector<std::string> netdevs_ = {"eth0", "eth1", "veth0"};
};

TEST_F(PciePollerTest, NothingBeforeTheFirstRound) {
  PciePoller poller = MakePoller();
  EXPECT_EQ(poller.Latest(), nullptr);
}

TEST_F(PciePollerTest, PublishesEveryPciNetdevAndLeavesOutTheOthers) {
  PciePoller poller = MakePoller();
  poller.PollOnce();
  auto state = poller.Latest();
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->links.size(), 2u);  // veth0 has no PCI function: no entry, no error
  ASSERT_TRUE(state->links.contains("eth1"));
  const PcieLink& eth1 = state->links.at("eth1");
  EXPECT_EQ(eth1.function.address, "0000:3b:00.1");
  ASSERT_TRUE(eth1.upstream);
  EXPECT_EQ(eth1.upstream->aer_fatal, 0u);
  EXPECT_EQ(eth1.function.aer_nonfatal, 0u);
  EXPECT_EQ(state->reads, 4u);  // three links and the GPU topology
  EXPECT_EQ(state->errors.at("malformed"), 0u);
  EXPECT_DOUBLE_EQ(state->interval_seconds, 30);
}

TEST_F(PciePollerTest, AFailedReadLeavesNoStaleLinkAndIsCounted) {
  PciePoller poller = MakePoller();
  poller.PollOnce();
  Write(bridge_ / "0000:3b:00.0/current_link_width", "sixteen\n");
  poller.PollOnce();
  auto state = poller.Latest();
  ASSERT_NE(state, nullptr);
  EXPECT_FALSE(state->links.contains("eth0"));
  EXPECT_TRUE(state->links.contains("eth1"));
  EXPECT_EQ(state->errors.at("malformed"), 1u);
  EXPECT_EQ(state->reads, 7u);  // the GPU topology in the first round only: same selection
}

TEST_F(PciePollerTest, ANetdevThatLeftTheSelectionIsDropped) {
  PciePoller poller = MakePoller();
  poller.PollOnce();
  netdevs_ = {"eth1"};
  poller.PollOnce();
  auto state = poller.Latest();
  ASSERT_NE(state, nullptr);
  EXPECT_FALSE(state->links.contains("eth0"));
  EXPECT_TRUE(state->links.contains("eth1"));
}

TEST_F(PciePollerTest, AHostWithoutGpusHasAnEmptyTopologyAndNoSeries) {
  PciePoller poller = MakePoller();
  poller.PollOnce();
  auto state = poller.Latest();
  ASSERT_NE(state, nullptr);
  ASSERT_NE(state->gpu_topology, nullptr);  // read, found nothing: not failed
  EXPECT_TRUE(state->gpu_topology->gpus.empty());
  EXPECT_TRUE(state->gpu_topology->pairs.empty());
  EXPECT_EQ(state->reads, 4u);  // three links and the topology
  for (const auto& [reason, count] : state->errors) EXPECT_EQ(count, 0u) << reason;
  const Families f = Render(state, netdevs_);
  EXPECT_EQ(testing::Count(f, "roce_nic_gpu_topology"), 0u);
  EXPECT_EQ(testing::Count(f, "roce_nic_numa_node"), 0u);  // the fixture has no numa_node
  EXPECT_EQ(testing::Count(f, "roce_gpu_numa_node"), 0u);
}

// --- The GPU topology on the machines of tests/fixtures/gpu_topology (docs/gpus.md). ---

// A fixture's expected.txt (its `nvidia-smi topo -m` NIC rows) as the series the exporter serves.
struct ExpectedSeries {
  std::vector<std::string> netdevs;
  std::set<testing::LabelMap> pairs;
  std::map<std::string, double> nic_numa, gpu_numa;  // no entry: unknown, no series
};

ExpectedSeries ReadExpected(const fs::path& file) {
  const testing::PublishedGpuMatrix m = testing::ReadPublishedGpuMatrix(file);
  ExpectedSeries e;
  e.netdevs = m.netdevs;
  for (size_t g = 0; g < m.gpus.size(); ++g) {
    if (m.gpu_numa.at(g)) e.gpu_numa[m.gpus[g]] = *m.gpu_numa[g];
  }
  for (size_t n = 0; n < m.netdevs.size(); ++n) {
    if (m.nic_numa[n]) e.nic_numa[m.netdevs[n]] = *m.nic_numa[n];
    for (size_t g = 0; g < m.gpus.size(); ++g) {
      e.pairs.insert({{"netdev", m.netdevs[n]},
                      {"gpu_pci_bus_id", m.gpus[g]},
                      {"relation", m.relations[n][g]}});
    }
  }
  return e;
}

std::set<testing::LabelMap> SeriesOf(const Families& f, std::string_view name) {
  std::set<testing::LabelMap> out;
  const prometheus::MetricFamily* family = testing::Find(f, name);
  if (family == nullptr) return out;
  for (const auto& m : family->metric) {
    EXPECT_DOUBLE_EQ(m.gauge.value, 1) << name;
    out.insert(testing::Labels(m));
  }
  return out;
}

class GpuTopologyPoll : public ::testing::TestWithParam<std::string> {
 protected:
  fs::path Dir() const { return fs::path(ROCEQOS_FIXTURES_DIR) / "gpu_topology" / GetParam(); }
};

TEST_P(GpuTopologyPoll, ServesThePublishedMatrixAsSeries) {
  const ExpectedSeries expected = ReadExpected(Dir() / "expected.txt");
  ASSERT_FALSE(expected.pairs.empty());
  PciePoller poller({.sysfs_root = (Dir() / "sys").string()}, [&] { return expected.netdevs; });
  poller.PollOnce();
  auto state = poller.Latest();
  ASSERT_NE(state, nullptr);
  ASSERT_NE(state->gpu_topology, nullptr);
  for (const auto& [reason, count] : state->errors) EXPECT_EQ(count, 0u) << reason;
  const Families f = Render(state, expected.netdevs);
  EXPECT_EQ(SeriesOf(f, "roce_nic_gpu_topology"), expected.pairs);
  EXPECT_EQ(testing::Count(f, "roce_nic_numa_node"), expected.nic_numa.size());
  for (const auto& [netdev, node] : expected.nic_numa) {
    EXPECT_DOUBLE_EQ(testing::Value(f, "roce_nic_numa_node", {{"netdev", netdev}}), node);
  }
  EXPECT_EQ(testing::Count(f, "roce_gpu_numa_node"), expected.gpu_numa.size());
  for (const auto& [gpu, node] : expected.gpu_numa) {
    EXPECT_DOUBLE_EQ(testing::Value(f, "roce_gpu_numa_node", {{"gpu_pci_bus_id", gpu}}), node);
  }
}

// --gpu-topology.nearest-only: per NIC the GPUs at its best relation, nothing else.
TEST_P(GpuTopologyPoll, NearestOnlyKeepsEachNicsBestRelation) {
  const ExpectedSeries expected = ReadExpected(Dir() / "expected.txt");
  PciePoller poller({.sysfs_root = (Dir() / "sys").string(), .gpu_nearest_only = true},
                    [&] { return expected.netdevs; });
  poller.PollOnce();
  const std::set<testing::LabelMap> kept =
      SeriesOf(Render(poller.Latest(), expected.netdevs), "roce_nic_gpu_topology");
  std::map<std::string, std::string> best;  // netdev -> its nearest relation, from the matrix
  for (std::string_view relation : {"SYS", "NODE", "PHB", "PXB", "PIX"}) {
    for (const testing::LabelMap& pair : expected.pairs) {
      if (pair.at("relation") == relation) best[pair.at("netdev")] = relation;
    }
  }
  std::set<testing::LabelMap> nearest;
  for (const testing::LabelMap& pair : expected.pairs) {
    if (pair.at("relation") == best.at(pair.at("netdev"))) nearest.insert(pair);
  }
  EXPECT_EQ(kept, nearest);
  // docs/gpus.md "Cardinality": every NIC of two_socket has its one GPU.
  const std::map<std::string, size_t> kept_pairs = {
      {"dgx_a100", 16}, {"dgx_h100", 8}, {"two_socket", 3}};
  EXPECT_EQ(kept.size(), kept_pairs.at(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Machines, GpuTopologyPoll,
                         ::testing::Values("dgx_a100", "dgx_h100", "two_socket"));

// A writable copy of the DGX H100 tree, to take a GPU away or break a file.
class GpuTopologyChange : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("roceqos_gpupoll_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::copy(fs::path(ROCEQOS_FIXTURES_DIR) / "gpu_topology/dgx_h100/sys", root_,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    netdevs_ =
        ReadExpected(fs::path(ROCEQOS_FIXTURES_DIR) / "gpu_topology/dgx_h100/expected.txt").netdevs;
  }
  void TearDown() override { fs::remove_all(root_); }

  // Every round re-reads the topology unless `refresh` says otherwise.
  PciePoller MakePoller(std::chrono::nanoseconds refresh = std::chrono::seconds(30)) {
    return PciePoller({.interval = std::chrono::seconds(30),
                       .sysfs_root = root_.string(),
                       .gpu_topology_refresh = refresh},
                      [this] { return netdevs_; });
  }
  size_t Pairs(const PciePoller& poller) const {
    return testing::Count(Render(poller.Latest(), netdevs_), "roce_nic_gpu_topology");
  }
  // GPU 0 (0000:1b:00.0) removed, as `echo 1 > remove` leaves sysfs: no link, no directory.
  void RemoveGpu0() {
    const fs::path link = root_ / "bus/pci/devices/0000:1b:00.0";
    fs::remove_all(fs::canonical(link));
    fs::remove(link);
  }

  fs::path root_;
  std::vector<std::string> netdevs_;
};

TEST_F(GpuTopologyChange, AVanishedGpuLeavesNoSeries) {
  PciePoller poller = MakePoller();
  poller.PollOnce();
  EXPECT_EQ(Pairs(poller), 64u);
  RemoveGpu0();
  poller.PollOnce();
  const Families f = Render(poller.Latest(), netdevs_);
  EXPECT_EQ(testing::Count(f, "roce_nic_gpu_topology"), 56u);  // 8 NICs x 7 GPUs
  EXPECT_EQ(testing::Count(f, "roce_gpu_numa_node"), 7u);
  const prometheus::MetricFamily* pairs = testing::Find(f, "roce_nic_gpu_topology");
  ASSERT_NE(pairs, nullptr);
  for (const auto& m : pairs->metric)
    EXPECT_NE(testing::Labels(m).at("gpu_pci_bus_id"), "00000000:1B:00.0");
}

TEST_F(GpuTopologyChange, ANicThatLeftTheSelectionLeavesNoSeries) {
  PciePoller poller = MakePoller(std::chrono::minutes(10));
  poller.PollOnce();
  netdevs_.pop_back();  // a selection change re-reads at once
  poller.PollOnce();
  EXPECT_EQ(poller.Latest()->gpu_topology->nics.size(), 7u);
  EXPECT_EQ(Pairs(poller), 56u);
}

// The topology is read again when the selection changes or after the refresh (10 minutes: 20
// rounds of 30s), not every round.
TEST_F(GpuTopologyChange, ReadAgainAfterTheRefreshNotEveryRound) {
  PciePoller poller = MakePoller(std::chrono::minutes(10));
  poller.PollOnce();
  const uint64_t first_reads = poller.Latest()->reads;  // 8 links and the topology
  EXPECT_EQ(first_reads, 9u);
  RemoveGpu0();
  for (int round = 1; round < 20; ++round) poller.PollOnce();
  EXPECT_EQ(Pairs(poller), 64u);  // kept: not due yet
  EXPECT_EQ(poller.Latest()->reads, first_reads + 19 * 8);
  poller.PollOnce();  // round 20: due
  EXPECT_EQ(Pairs(poller), 56u);
  EXPECT_EQ(poller.Latest()->reads, first_reads + 20 * 8 + 1);
}

TEST_F(GpuTopologyChange, AFailedReadKeepsNoStaleSeriesAndIsRetriedNextRound) {
  PciePoller poller = MakePoller(std::chrono::minutes(10));
  poller.PollOnce();
  const fs::path numa = fs::canonical(root_ / "bus/pci/devices/0000:43:00.0") / "numa_node";
  std::ofstream(numa) << "zero\n";
  netdevs_.pop_back();  // a selection change: read again
  poller.PollOnce();
  auto state = poller.Latest();
  EXPECT_EQ(state->gpu_topology, nullptr);
  EXPECT_EQ(state->errors.at("malformed"), 1u);
  const Families f = Render(state, netdevs_);
  EXPECT_EQ(testing::Count(f, "roce_nic_gpu_topology"), 0u);
  EXPECT_EQ(testing::Count(f, "roce_nic_numa_node"), 0u);
  EXPECT_EQ(testing::Count(f, "roce_gpu_numa_node"), 0u);
  std::ofstream(numa) << "0\n";
  poller.PollOnce();  // same selection, but the last read failed: read again
  EXPECT_EQ(Pairs(poller), 56u);
}

}  // namespace
}  // namespace roceqos
