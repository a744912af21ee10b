#include <gtest/gtest.h>
#include <linux/ethtool.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "collectors/ethtool_map.h"
#include "exporter/render/metrics.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/metric_families.h"

namespace roceqos {
namespace {

using testing::Count;
using testing::MakeDevice;
using testing::Value;

// A device whose `ethtool -S` has mlx5's link names with these values.
DeviceSnapshot WithEthtool(const std::string& netdev, uint64_t symbols, uint64_t crc,
                           uint64_t downs) {
  DeviceSnapshot d;
  d.device = std::make_shared<const Device>(MakeDevice(netdev, 2));
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{
      "rx_packets_phy", "rx_crc_errors_phy", "rx_symbol_err_phy", "link_down_events_phy"});
  EthtoolSample sample;
  sample.counters = CounterSet{names, {100, crc, symbols, downs}};
  sample.link_names = std::make_shared<const LinkEthtoolNames>(MapMlx5LinkNames(*names));
  d.ethtool = std::move(sample);
  return d;
}

Snapshot TwoPorts() {
  Snapshot s;
  s.devices.push_back(WithEthtool("sim0", 386, 17, 2));
  s.devices.push_back(WithEthtool("sim1", 5, 6, 7));
  return s;
}

TEST(RenderLink, WithoutThePollerEveryFigureComesFromEthtool) {
  const Snapshot s = TwoPorts();
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_link_symbol_errors_total", {{"netdev", "sim0"}, {"source", "ethtool"}}),
            386);
  EXPECT_EQ(Value(f, "roce_link_fcs_errors_total", {{"netdev", "sim1"}, {"source", "ethtool"}}), 6);
  EXPECT_EQ(Value(f, "roce_link_down_events_total", {{"netdev", "sim1"}, {"source", "ethtool"}}),
            7);
  // FEC blocks and mode exist only through netlink; no poller, no series.
  EXPECT_EQ(Count(f, "roce_link_fec_uncorrectable_blocks_total"), 0u);
  EXPECT_EQ(Count(f, "roce_link_fec_info"), 0u);
  EXPECT_EQ(Count(f, "roce_exporter_link_read_errors_total"), 0u);
}

TEST(RenderLink, NetlinkServesWhatItHasAndEthtoolTheRest) {
  Snapshot s = TwoPorts();
  auto state = std::make_shared<LinkState>();
  LinkReading sim0;
  sim0.netlink.fec = FecReply{.active_link_mode = ETHTOOL_LINK_MODE_FEC_RS_BIT,
                              .corrected_blocks = {900, 400, 500},
                              .uncorrectable_blocks = {3, 1, 2}};
  sim0.netlink.std_stats = StdStatsReply{.symbol_errors = 390, .fcs_errors = std::nullopt};
  sim0.netlink.state = LinkStateReply{.link_up = true, .link_down_events = std::nullopt};
  sim0.pre_fec_ber = 2.5e-7;
  state->links["sim0"] = sim0;
  state->links["gone0"] = sim0;  // left the selection: not rendered
  state->errors = {{"device_gone", 1}};
  s.links = state;
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_link_fec_corrected_blocks_total", {{"netdev", "sim0"}}), 900);
  EXPECT_EQ(Value(f, "roce_link_fec_uncorrectable_blocks_total", {{"netdev", "sim0"}}), 3);
  EXPECT_EQ(Value(f, "roce_link_fec_info", {{"netdev", "sim0"}, {"mode", "rs"}}), 1);
  EXPECT_DOUBLE_EQ(Value(f, "roce_link_pre_fec_ber", {{"netdev", "sim0"}}), 2.5e-7);
  EXPECT_EQ(Value(f, "roce_link_symbol_errors_total", {{"netdev", "sim0"}, {"source", "netlink"}}),
            390);
  // One series per figure: the netlink one replaces the ethtool one, never both.
  EXPECT_TRUE(std::isnan(
      Value(f, "roce_link_symbol_errors_total", {{"netdev", "sim0"}, {"source", "ethtool"}})));
  EXPECT_EQ(Value(f, "roce_link_fcs_errors_total", {{"netdev", "sim0"}, {"source", "ethtool"}}),
            17);
  EXPECT_EQ(Value(f, "roce_link_down_events_total", {{"netdev", "sim0"}, {"source", "ethtool"}}),
            2);
  EXPECT_EQ(Count(f, "roce_link_fec_corrected_blocks_total"), 1u);  // not gone0, not sim1
  EXPECT_EQ(Count(f, "roce_link_symbol_errors_total"), 2u);
  EXPECT_EQ(Value(f, "roce_exporter_link_read_errors_total", {{"reason", "device_gone"}}), 1);
}

TEST(RenderLink, ADeviceWithoutLinkNamesOrEthtoolHasNoLinkSeries) {
  Snapshot s;
  DeviceSnapshot d;
  d.device = std::make_shared<const Device>(MakeDevice("veth0", 3, "veth"));
  s.devices.push_back(d);
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_link_symbol_errors_total"), 0u);
  EXPECT_EQ(Count(f, "roce_link_down_events_total"), 0u);
}

}  // namespace
}  // namespace roceqos
