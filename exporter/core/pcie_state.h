#pragma once

// What the PCIe poller (exporter/sampling/pcie_poller.h) publishes: the PCIe link of every
// selected netdev's PCI function as of its last read, and the poller's counts. Plain data beside
// the snapshot that carries it, so render/ reads it without knowing the poller.

#include <cstdint>
#include <map>
#include <string>

#include "collectors/pcie_link.h"

namespace roceqos {

/// What the poller publishes; the renderer reads nothing else.
struct PcieState {
  /// netdev -> its PCIe link. Netdevs without a PCI function (veth, a bond) and those whose last
  /// read failed have no entry: a failed read leaves no stale values.
  std::map<std::string, PcieLink> links;
  uint64_t reads = 0;  // link reads attempted since start (one per netdev per round)
  /// reason -> failed link reads since start; every reason is present (0 until it happens).
  std::map<std::string, uint64_t> errors;
  double interval_seconds = 0;  // --pcie.interval
};

}  // namespace roceqos
