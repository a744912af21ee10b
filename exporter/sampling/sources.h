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

/// `ethtool -S` values of one netdev: one ETHTOOL_GSTATS per call (collectors/ethtool.h
/// `EthtoolCollector`). The names pointer in the result must stay the same object while the
/// string set is unchanged: the sampler caches its name mapping per pointer.
class NetdevStatsSource {
 public:
  virtual ~NetdevStatsSource() = default;
  virtual Result<CounterSet> Sample(const std::string& ifname) = 0;
  /// Drops per-device state of a netdev that left the selection.
  virtual void Forget(const std::string& ifname) = 0;
  /// Makes the next Sample re-read the names (a stage saw PFC or pause change on the device).
  virtual void Invalidate(const std::string& /*ifname*/) {}
};

// RdmaOpener (collectors/discovery.h): opens the RDMA netlink collector.
using EthtoolNameMapper =
    std::function<std::vector<MappedCounter>(const std::vector<std::string>&)>;
using DefaultDeviceRule = std::function<bool(const Device&)>;

/// Everything the sampler reads from, plus the pure functions the collectors provide.
struct SamplerSources {
  std::unique_ptr<InventorySource> inventory;
  std::unique_ptr<NetdevStatsSource> ethtool;
  /// Opens the RDMA netlink collector; called at start and retried at the discovery cadence while
  /// it fails (RDMA modules can load after the exporter started).
  RdmaOpener open_rdma;
  EthtoolNameMapper map_ethtool_names;    // MapMlx5EthtoolNames in production
  DefaultDeviceRule selected_by_default;  // SelectedByDefault in production
};

/// The real kernel sources. Defined in kernel_sources.cc.
SamplerSources MakeKernelSources();

}  // namespace roceqos
