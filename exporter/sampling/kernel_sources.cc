// The production SamplerSources: the kernel collectors from collectors/. Only main.cc calls
// MakeKernelSources(), so unit tests and benchmarks link without the kernel code paths.

#include <memory>

#include "collectors/discovery.h"
#include "collectors/ethtool.h"
#include "collectors/ethtool_map.h"
#include "collectors/rdma.h"
#include "exporter/sampling/sources.h"

namespace roceqos {
namespace {

class KernelInventory : public InventorySource {
 public:
  Result<Inventory> Discover() override { return discovery_.Discover(); }

 private:
  Discovery discovery_;
};

class KernelEthtoolStats : public NetdevStatsSource {
 public:
  explicit KernelEthtoolStats(std::unique_ptr<EthtoolIo> io)
      : io_(std::move(io)), collector_(*io_) {}
  Result<CounterSet> Sample(const std::string& ifname) override {
    return collector_.Sample(ifname);
  }
  void Forget(const std::string& ifname) override { collector_.Forget(ifname); }
  void Invalidate(const std::string& ifname) override { collector_.Invalidate(ifname); }

 private:
  std::unique_ptr<EthtoolIo> io_;
  EthtoolCollector collector_;
};

}  // namespace

SamplerSources MakeKernelSources() {
  SamplerSources sources;
  sources.inventory = std::make_unique<KernelInventory>();
  sources.ethtool = std::make_unique<KernelEthtoolStats>(MakeKernelEthtoolIo());
  sources.open_rdma = [] { return RdmaCollector::Open(); };
  sources.map_ethtool_names = MapMlx5EthtoolNames;
  sources.selected_by_default = SelectedByDefault;
  return sources;
}

}  // namespace roceqos
