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

}  // namespace

SamplerSources MakeKernelSources() {
  SamplerSources sources;
  sources.inventory = std::make_unique<KernelInventory>();
  sources.ethtool = MakeKernelEthtoolIo();
  sources.open_rdma = [] { return RdmaCollector::Open(); };
  sources.map_ethtool_names = MapMlx5EthtoolNames;
  sources.selected_by_default = SelectedByDefault;
  return sources;
}

}  // namespace roceqos
