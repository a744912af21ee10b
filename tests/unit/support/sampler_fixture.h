#pragma once

// The sampler over the fake sources on a fake clock, shared by the sampler's test files
// (tests/unit/exporter/sampling/sampler*_test.cc).

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exporter/render/metrics.h"
#include "exporter/sampling/sampler.h"
#include "tests/unit/support/fake_sources.h"

namespace roceqos::testing {

// A stand-in for MapMlx5EthtoolNames that knows the per-priority pause names, enough to see the
// sampler apply a mapping per string-set generation.
inline std::vector<MappedCounter> MapPauseNames(const std::vector<std::string>& names) {
  std::vector<MappedCounter> out;
  for (uint32_t i = 0; i < names.size(); ++i) {
    int prio = -1;
    char dir[3] = {};
    int consumed = 0;
    if (std::sscanf(names[i].c_str(), "%2[rtx]_prio%d_pause%n", dir, &prio, &consumed) == 2 &&
        static_cast<size_t>(consumed) == names[i].size()) {
      out.push_back({PortCounter::kPauseFrames,
                     std::string_view(dir) == "rx" ? Direction::kRx : Direction::kTx,
                     static_cast<int8_t>(prio), i});
    }
  }
  return out;
}

/// The text exposition of `snapshot` (prometheus-cpp's serializer).
inline std::string Render(const Snapshot& snapshot) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, RenderSnapshot(&snapshot));
  return out.str();
}

/// A Sampler over FakeInventory, FakeEthtool and FakeRdma on a FakeClock; Build() makes it.
class SamplerFixture : public ::testing::Test {
 protected:
  /// `inventory_source` replaces the FakeInventory (which then stays unused).
  void Build(SamplerOptions options = {}, bool rdma_opens = true,
             std::unique_ptr<InventorySource> inventory_source = nullptr) {
    auto inventory = std::make_unique<FakeInventory>();
    auto ethtool = std::make_unique<FakeEthtool>();
    inventory_ = inventory.get();
    ethtool_ = ethtool.get();
    inventory_->clock = &clock_;
    ethtool_->clock = &clock_;
    SamplerSources sources;
    sources.inventory = inventory_source ? std::move(inventory_source) : std::move(inventory);
    sources.ethtool = std::move(ethtool);
    sources.open_rdma = [this, rdma_opens]() -> Result<std::unique_ptr<RdmaCollector>> {
      ++rdma_opens_;
      if (!rdma_opens) {
        return MakeError(EPROTONOSUPPORT, "socket(NETLINK_RDMA): Protocol not supported");
      }
      auto rdma = std::make_unique<FakeRdma>();
      rdma->counters = rdma_counters_;
      rdma->clock = &clock_;
      rdma_ = rdma.get();
      return std::unique_ptr<RdmaCollector>(std::move(rdma));
    };
    sources.map_ethtool_names = MapPauseNames;
    sources.selected_by_default = [](const Device& d) { return d.driver == "mlx5_core"; };
    sampler_ = std::make_unique<Sampler>(std::move(options), std::move(sources), clock_.AsClock());
  }

  void AddDevice(Device device, std::vector<std::string> names) {
    ethtool_->SetNames(device.name, std::move(names));
    inventory_->inventory.devices.push_back(std::move(device));
  }

  std::shared_ptr<const Snapshot> Sample() {
    sampler_->SampleOnce();
    clock_.now += std::chrono::milliseconds(250);
    return sampler_->Latest();
  }

  FakeClock clock_;
  FakeInventory* inventory_ = nullptr;
  FakeEthtool* ethtool_ = nullptr;
  FakeRdma* rdma_ = nullptr;
  std::map<std::string, CounterSet> rdma_counters_;
  int rdma_opens_ = 0;
  std::unique_ptr<Sampler> sampler_;
};

}  // namespace roceqos::testing
