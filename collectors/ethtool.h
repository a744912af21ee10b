#pragma once

// ETHTOOL_GSTATS sampling with the string set cached per generation (reference §4.4).

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "collectors/device.h"
#include "collectors/result.h"

namespace roceqos {

struct DriverInfo {
  std::string driver;    // ethtool_drvinfo.driver
  std::string bus_info;  // ethtool_drvinfo.bus_info
  std::string fw_version;
};

/// The SIOCETHTOOL calls the collector needs, behind an interface so tests can change the string
/// set between calls the way mlx5 does when PFC is toggled.
class EthtoolIo {
 public:
  virtual ~EthtoolIo() = default;
  /// ETHTOOL_GSSET_INFO with sset_mask = 1 << ETH_SS_STATS.
  virtual Result<uint32_t> StatsCount(const std::string& ifname) = 0;
  /// ETHTOOL_GSTRINGS for ETH_SS_STATS with len = count. Returns fewer/zero names when the kernel
  /// reports a different count (post-2025 kernels answer len = 0 on a mismatch).
  virtual Result<std::vector<std::string>> StatsNames(const std::string& ifname,
                                                      uint32_t count) = 0;
  /// ETHTOOL_GSTATS with n_stats = count and a buffer with slack; returns what the kernel wrote
  /// (n_stats as returned, which may be 0 or differ from count).
  virtual Result<std::vector<uint64_t>> StatsValues(const std::string& ifname, uint32_t count) = 0;
  /// ETHTOOL_GDRVINFO.
  virtual Result<DriverInfo> GetDriverInfo(const std::string& ifname) = 0;
};

/// The real ioctl implementation (one AF_INET datagram socket, kept open).
std::unique_ptr<EthtoolIo> MakeKernelEthtoolIo();

/// Samples `ethtool -S` values. The names are fetched once per string-set generation and re-read
/// only when the count changes or GSTATS answers with a different count.
class EthtoolCollector {
 public:
  explicit EthtoolCollector(EthtoolIo& io);

  /// One GSTATS (plus GSSET_INFO + GSTRINGS when the set changed). The names pointer in the
  /// result is shared and stays the same object while the generation is unchanged.
  Result<CounterSet> Sample(const std::string& ifname);
  /// Drops cached strings of a device that vanished.
  void Forget(const std::string& ifname);
  /// Increments each time the string set of `ifname` is (re-)read; 0 if never sampled.
  uint64_t Generation(const std::string& ifname) const;

 private:
  struct Cache {
    std::shared_ptr<const std::vector<std::string>> names;
    uint64_t generation = 0;
  };
  EthtoolIo& io_;
  std::unordered_map<std::string, Cache> cache_;
};

}  // namespace roceqos
