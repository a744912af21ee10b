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

}  // namespace
}  // namespace roceqos
