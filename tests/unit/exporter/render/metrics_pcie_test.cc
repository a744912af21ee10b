#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "exporter/core/pcie_state.h"
#include "exporter/render/metrics.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/metric_families.h"

namespace roceqos {
namespace {

using testing::Count;
using testing::MakeDevice;
using testing::Value;

PcieLink DegradedLink() {
  PcieLink link;
  link.function = {.address = "0000:3b:00.0",
                   .speed_gts = 8.0,
                   .max_speed_gts = 16.0,
                   .width = 8,
                   .max_width = 16,
                   .aer_correctable = 6,
                   .aer_nonfatal = 1,
                   .aer_fatal = 0};
  link.upstream = PcieDeviceLink{.address = "0000:00:02.0",
                                 .speed_gts = 8.0,
                                 .max_speed_gts = 16.0,
                                 .width = 8,
                                 .max_width = 8,
                                 .aer_correctable = 40,
                                 .aer_nonfatal = 0,
                                 .aer_fatal = 2};
  return link;
}

Snapshot WithLinks(const std::vector<std::string>& netdevs) {
  Snapshot s;
  for (const std::string& n : netdevs) {
    DeviceSnapshot d;
    d.device = std::make_shared<const Device>(MakeDevice(n, 2));
    s.devices.push_back(d);
  }
  auto state = std::make_shared<PcieState>();
  state->links["sim0"] = DegradedLink();
  PcieLink bare;  // no AER statistics, no upstream port, unknown speed
  bare.function.address = "0000:00:03.0";
  bare.function.width = 1;
  bare.function.max_width = 1;
  state->links["sim1"] = bare;
  state->reads = 9;
  state->errors = {{"malformed", 1}, {"other", 0}};
  state->interval_seconds = 30;
  s.pcie = state;
  return s;
}

TEST(RenderPcie, CurrentAgainstTheLinkMaximum) {
  const Snapshot s = WithLinks({"sim0", "sim1"});
  const Families f = RenderSnapshot(&s);
  EXPECT_DOUBLE_EQ(Value(f, "roce_pcie_link_speed_gts", {{"netdev", "sim0"}, {"bound", "current"}}),
                   8);
  EXPECT_DOUBLE_EQ(Value(f, "roce_pcie_link_speed_gts", {{"netdev", "sim0"}, {"bound", "max"}}),
                   16);
  EXPECT_DOUBLE_EQ(Value(f, "roce_pcie_link_width", {{"netdev", "sim0"}, {"bound", "current"}}), 8);
  // The upstream port's x8 bounds the link: x8 of x16 on the NIC is not a degradation here.
  EXPECT_DOUBLE_EQ(Value(f, "roce_pcie_link_width", {{"netdev", "sim0"}, {"bound", "max"}}), 8);
}

TEST(RenderPcie, AerTotalsOfBothSidesButTheUpstreamCorrectable) {
  const Snapshot s = WithLinks({"sim0"});
  const Families f = RenderSnapshot(&s);
  EXPECT_DOUBLE_EQ(Value(f, "roce_pcie_aer_errors_total",
                         {{"netdev", "sim0"}, {"side", "function"}, {"class", "correctable"}}),
                   6);
  EXPECT_DOUBLE_EQ(Value(f, "roce_pcie_aer_errors_total",
                         {{"netdev", "sim0"}, {"side", "function"}, {"class", "nonfatal"}}),
                   1);
  EXPECT_DOUBLE_EQ(Value(f, "roce_pcie_aer_errors_total",
                         {{"netdev", "sim0"}, {"side", "upstream"}, {"class", "fatal"}}),
                   2);
  // The upstream port's correctable count (40 in the fixture) is not rendered.
  EXPECT_EQ(Count(f, "roce_pcie_aer_errors_total"), 5u);
  // 4 link series and 5 AER series per port: the budget docs/pcie.md states.
  EXPECT_EQ(Count(f, "roce_pcie_link_speed_gts") + Count(f, "roce_pcie_link_width"), 4u);
}

TEST(RenderPcie, AbsentValuesHaveNoSeries) {
  const Snapshot s = WithLinks({"sim1"});
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_pcie_link_speed_gts"), 0u);
  EXPECT_EQ(Count(f, "roce_pcie_aer_errors_total"), 0u);
  EXPECT_EQ(Count(f, "roce_pcie_link_width"), 2u);
}

TEST(RenderPcie, OnlyNetdevsOfTheSnapshotAndThePollerCounts) {
  const Snapshot s = WithLinks({"other0"});  // sim0 and sim1 left the selection
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_pcie_link_speed_gts"), 0u);
  EXPECT_EQ(Count(f, "roce_pcie_link_width"), 0u);
  EXPECT_DOUBLE_EQ(Value(f, "roce_exporter_pcie_reads_total", {}), 9);
  EXPECT_DOUBLE_EQ(Value(f, "roce_exporter_pcie_read_errors_total", {{"reason", "malformed"}}), 1);
  EXPECT_DOUBLE_EQ(Value(f, "roce_exporter_pcie_interval_seconds", {}), 30);
}

TEST(RenderPcie, NothingWithThePollerOff) {
  Snapshot s = WithLinks({"sim0"});
  s.pcie.reset();
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_pcie_link_speed_gts"), 0u);
  EXPECT_EQ(Count(f, "roce_exporter_pcie_reads_total"), 0u);
}

// --- The GPU topology (docs/gpus.md) ---

GpuDevice Gpu(std::string pci_bus_id, std::optional<int> numa) {
  GpuDevice gpu;
  gpu.pci_bus_id = std::move(pci_bus_id);
  gpu.placement.numa_node = numa;
  return gpu;
}

NicPlacement Nic(std::string netdev, std::optional<int> numa) {
  NicPlacement nic;
  nic.netdev = std::move(netdev);
  nic.placement.numa_node = numa;
  return nic;
}

// sim0 and gone0 (which left the selection since the read), two GPUs, one of unknown affinity.
Snapshot WithTopology(const std::vector<std::string>& netdevs) {
  Snapshot s = WithLinks(netdevs);
  auto topology = std::make_shared<GpuTopology>();
  topology->gpus = {Gpu("00000000:17:00.0", 0), Gpu("00000000:98:00.0", std::nullopt)};
  topology->nics = {Nic("sim0", 0), Nic("gone0", 1), Nic("sim1", std::nullopt)};
  topology->pairs = {{"sim0", "00000000:17:00.0", PcieRelation::kPhb},
                     {"sim0", "00000000:98:00.0", PcieRelation::kSys},
                     {"gone0", "00000000:17:00.0", PcieRelation::kSys},
                     {"gone0", "00000000:98:00.0", PcieRelation::kPix},
                     {"sim1", "00000000:17:00.0", PcieRelation::kNode},
                     {"sim1", "00000000:98:00.0", PcieRelation::kSys}};
  auto state = std::make_shared<PcieState>(*s.pcie);
  state->gpu_topology = topology;
  s.pcie = state;
  return s;
}

TEST(RenderGpuTopology, OnePairSeriesPerSelectedNicAndGpuAndTheKnownNumaNodes) {
  const Snapshot s = WithTopology({"sim0", "sim1"});
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_nic_gpu_topology"), 4u);
  EXPECT_DOUBLE_EQ(
      Value(f, "roce_nic_gpu_topology",
            {{"netdev", "sim0"}, {"gpu_pci_bus_id", "00000000:17:00.0"}, {"relation", "PHB"}}),
      1);
  EXPECT_DOUBLE_EQ(
      Value(f, "roce_nic_gpu_topology",
            {{"netdev", "sim1"}, {"gpu_pci_bus_id", "00000000:17:00.0"}, {"relation", "NODE"}}),
      1);
  EXPECT_DOUBLE_EQ(
      Value(f, "roce_nic_gpu_topology",
            {{"netdev", "sim1"}, {"gpu_pci_bus_id", "00000000:98:00.0"}, {"relation", "SYS"}}),
      1);
  EXPECT_EQ(Count(f, "roce_nic_numa_node"), 1u);  // sim1's is unknown, gone0 is not selected
  EXPECT_DOUBLE_EQ(Value(f, "roce_nic_numa_node", {{"netdev", "sim0"}}), 0);
  EXPECT_EQ(Count(f, "roce_gpu_numa_node"), 1u);
  EXPECT_DOUBLE_EQ(Value(f, "roce_gpu_numa_node", {{"gpu_pci_bus_id", "00000000:17:00.0"}}), 0);
}

TEST(RenderGpuTopology, NoSeriesWithoutATopologyOrWithoutGpus) {
  Snapshot failed = WithTopology({"sim0"});
  auto state = std::make_shared<PcieState>(*failed.pcie);
  state->gpu_topology.reset();  // the last read failed
  failed.pcie = state;
  Families f = RenderSnapshot(&failed);
  EXPECT_EQ(Count(f, "roce_nic_gpu_topology"), 0u);
  EXPECT_EQ(Count(f, "roce_nic_numa_node"), 0u);
  EXPECT_EQ(Count(f, "roce_gpu_numa_node"), 0u);
  EXPECT_DOUBLE_EQ(Value(f, "roce_exporter_pcie_reads_total", {}), 9);  // the poller's still are

  Snapshot no_gpu = WithTopology({"sim0"});
  auto empty = std::make_shared<PcieState>(*no_gpu.pcie);
  auto no_gpus = std::make_shared<GpuTopology>();
  no_gpus->nics = {Nic("sim0", 0)};
  empty->gpu_topology = no_gpus;
  no_gpu.pcie = empty;
  f = RenderSnapshot(&no_gpu);
  EXPECT_EQ(Count(f, "roce_nic_gpu_topology"), 0u);
  EXPECT_EQ(Count(f, "roce_gpu_numa_node"), 0u);
  EXPECT_EQ(Count(f, "roce_nic_numa_node"), 1u);  // the NIC's own affinity is still known
}

TEST(RenderGpuTopology, InThePcieGroup) {
  const Snapshot s = WithTopology({"sim0"});
  std::string text;
  MetricSink pcie_only(text, MetricGroups::Named("pcie").value());
  RenderSnapshot(&s, nullptr, pcie_only);
  EXPECT_NE(text.find("roce_nic_gpu_topology{"), std::string::npos);
  text.clear();
  MetricSink device_only(text, MetricGroups::Named("device").value());
  RenderSnapshot(&s, nullptr, device_only);
  EXPECT_EQ(text.find("roce_nic_gpu_topology"), std::string::npos);
}

}  // namespace
}  // namespace roceqos
