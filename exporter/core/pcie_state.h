#pragma once

// What the PCIe poller (exporter/sampling/pcie_poller.h) publishes: the PCIe link of every
// selected netdev's PCI function as of its last read, the PCIe distance between those netdevs and
// the host's GPUs (docs/gpus.md), and the poller's counts. Plain data beside the snapshot that
// carries it, so render/ reads it without knowing the poller.

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "collectors/gpu_topology.h"
#include "collectors/pcie_link.h"

namespace roceqos {

/// What the poller publishes; the renderer reads nothing else.
struct PcieState {
  /// netdev -> its PCIe link. Netdevs without a PCI function (veth, a bond) and those whose last
  /// read failed have no entry: a failed read leaves no stale values.
  std::map<std::string, PcieLink> links;
  /// Every selected netdev's relation to every NVIDIA GPU, and their NUMA nodes, as of the last
  /// topology read (re-read when the selection changes or the last read failed, and every 10
  /// minutes otherwise: PciePollerOptions::gpu_topology_refresh). Null when that read failed, so no
  /// stale pair is shown; empty `gpus` on a host without one. Shared between rounds: not copied.
  std::shared_ptr<const GpuTopology> gpu_topology;
  /// Reads attempted since start: one per netdev per round (its link) and one per topology read.
  uint64_t reads = 0;
  /// reason -> failed link and topology reads since start; every reason is present (0 until it
  /// happens).
  std::map<std::string, uint64_t> errors;
  double interval_seconds = 0;  // --pcie.interval
};

}  // namespace roceqos
