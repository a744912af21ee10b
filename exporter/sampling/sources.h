#pragma once

// What the sampler reads, behind interfaces so unit tests and benchmarks inject fakes. The kernel
// implementations are wired in kernel_sources.cc (collectors/discovery, ethtool, rdma).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "collectors/device.h"
#include "collectors/discovery.h"
#include "collectors/ethtool.h"
#include "collectors/ethtool_map.h"
#include "collectors/rdma.h"

namespace roceqos {

/// The netdev + RDMA inventory (collectors/discovery.h `Discovery`). Called at the discovery
/// cadence, never per sample.
class InventorySource {
 public:
  virtual ~InventorySource() = default;
  virtual Result<Inventory> Discover() = 0;
};

// RdmaOpener (collectors/discovery.h): opens the RDMA netlink collector.
using EthtoolNameMapper =
    std::function<std::vector<MappedCounter>(const std::vector<std::string>&)>;
using DefaultDeviceRule = std::function<bool(const Device&)>;

/// Everything the sampler reads from, plus the pure functions the collectors provide.
struct SamplerSources {
  std::unique_ptr<InventorySource> inventory;
  /// The SIOCETHTOOL calls behind `ethtool -S` (collectors/ethtool.h). The sampler reads them
  /// through its own EthtoolCollector: one ETHTOOL_GSTATS per netdev per sample in steady state,
  /// the names once per string-set generation (the same pointer while it lasts).
  std::unique_ptr<EthtoolIo> ethtool;
  /// Opens the RDMA netlink collector; called at start and retried at the discovery cadence while
  /// it fails (RDMA modules can load after the exporter started).
  RdmaOpener open_rdma;
  EthtoolNameMapper map_ethtool_names;    // MapMlx5EthtoolNames in production
  DefaultDeviceRule selected_by_default;  // SelectedByDefault in production
};

/// The real kernel sources. Defined in kernel_sources.cc.
SamplerSources MakeKernelSources();

}  // namespace roceqos
