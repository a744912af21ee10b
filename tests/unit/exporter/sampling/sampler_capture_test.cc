// The sampler and renderers on a real mlx5 `ethtool -S` capture, through the real name mapping.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "collectors/ethtool_map.h"
#include "exporter/render/metrics.h"
#include "exporter/sampling/sampler.h"
#include "tests/unit/support/ethtool_capture.h"
#include "tests/unit/support/fake_sources.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SamplerOnCapture, RendersTheMappedCountersOfARealMlx5StringSet) {
  const std::string text = testing::ReadCapture("24_");
  ASSERT_FALSE(text.empty()) << "capture 24 not found under ROCEQOS_CAPTURES_DIR";
  std::vector<testing::EthtoolBlock> blocks = testing::ParseEthtoolStats(text);
  ASSERT_FALSE(blocks.empty());
  const testing::EthtoolBlock& block =
      *std::max_element(blocks.begin(), blocks.end(),
                        [](const auto& a, const auto& b) { return a.size() < b.size(); });

  testing::FakeClock clock;
  auto inventory = std::make_unique<testing::FakeInventory>();
  inventory->inventory.devices.push_back(testing::MakeDevice("enp1s0f0", 2));
  auto ethtool = std::make_unique<testing::FakeEthtool>();
  ethtool->SetNames("enp1s0f0", testing::Names(block));
  ethtool->entries["enp1s0f0"].values = testing::Values(block);
  SamplerSources sources;
  sources.inventory = std::move(inventory);
  sources.ethtool = std::move(ethtool);
  sources.map_ethtool_names = MapMlx5EthtoolNames;
  sources.selected_by_default = [](const Device&) { return true; };
  SamplerOptions options;
  options.raw_include = std::regex("rx_vport_rdma_unicast_.*");
  Sampler sampler(std::move(options), std::move(sources), clock.AsClock());
  sampler.SampleOnce();

  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, RenderSnapshot(sampler.Latest().get()));
  const std::string body = out.str();
  // Values as in the capture, by their mlx5 names.
  EXPECT_THAT(body,
              HasSubstr("roce_prio_bytes_total{netdev=\"enp1s0f0\",prio=\"0\",direction=\"rx\"} "
                        "2202570777997\n"));
  EXPECT_THAT(body,
              HasSubstr("roce_prio_packets_total{netdev=\"enp1s0f0\",prio=\"0\",direction=\"tx\"} "
                        "896117891\n"));
  EXPECT_THAT(body,
              HasSubstr("roce_port_discards_total{netdev=\"enp1s0f0\",direction=\"rx\"} 0\n"));
  EXPECT_THAT(body, HasSubstr("roce_port_rx_out_of_buffer_packets_total{netdev=\"enp1s0f0\"} 0\n"));
  EXPECT_THAT(body, HasSubstr("stat=\"rx_vport_rdma_unicast_packets\""));
  // PFC was off in this capture: mlx5 lists no pause counters, so there are no pause series.
  EXPECT_THAT(body, Not(HasSubstr("roce_pfc_pause_frames_total")));

  const auto& families = RenderSnapshot(sampler.Latest().get());
  for (const auto& f : families) {
    if (f.name == "roce_prio_bytes_total") {
      EXPECT_EQ(f.metric.size(), 16u) << "8 prios × rx/tx";
    }
  }
}

}  // namespace
}  // namespace roceqos
