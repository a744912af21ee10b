#pragma once

// ETHTOOL_GSTATS sampling with the string set cached per generation
// (docs/kernel-interfaces.md §4.4).

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "collectors/device.h"

namespace roceqos {

struct DriverInfo {
  std::string driver;      // ethtool_drvinfo.driver
  std::string bus_info;    // ethtool_drvinfo.bus_info
  std::string fw_version;  // ethtool_drvinfo.fw_version
};

/// The SIOCETHTOOL calls the collector needs, behind an interface so tests can change the string
/// set between calls the way mlx5 does when PFC is toggled.
///
/// StatsNames/StatsValues return exactly what the kernel wrote, which is not always `count`
/// entries: kernels before the 2025 fix ignore the requested count and write the current set;
/// fixed kernels answer 0 entries on a mismatch. A set that outgrew the buffer's slack (old kernels
/// only) is reported as an Error with errnum EOVERFLOW, never written past the buffer.
class EthtoolIo {
 public:
  virtual ~EthtoolIo() = default;
  /// ETHTOOL_GSSET_INFO with sset_mask = 1 << ETH_SS_STATS. EOPNOTSUPP when the device has no
  /// ETH_SS_STATS set.
  virtual Result<uint32_t> StatsCount(const std::string& ifname) = 0;
  /// ETHTOOL_GSTRINGS for ETH_SS_STATS with len = count.
  virtual Result<std::vector<std::string>> StatsNames(const std::string& ifname,
                                                      uint32_t count) = 0;
  /// ETHTOOL_GSTATS with n_stats = count and a buffer with slack.
  virtual Result<std::vector<uint64_t>> StatsValues(const std::string& ifname, uint32_t count) = 0;
  /// ETHTOOL_GDRVINFO.
  virtual Result<DriverInfo> GetDriverInfo(const std::string& ifname) = 0;
};

/// The real ioctl implementation: one AF_INET datagram socket kept open, so it reads the network
/// namespace it was created in. Not thread-safe (it reuses its buffers); use one per sampler.
std::unique_ptr<EthtoolIo> MakeKernelEthtoolIo();

struct EthtoolCollectorOptions {
  /// Every this many steady-state samples of a device, the GSTATS is followed by one GSTRINGS that
  /// checks the cached names. mlx5 can reorder its set without changing the count (PFC moved from
  /// one priority to another, e.g. by firmware DCBX, which sends no notification); no GSTATS answer
  /// reveals that. 0 disables it (then only Invalidate() or a count change re-reads the names).
  uint32_t revalidate_every = 40;
};

/// Samples `ethtool -S` values. The names are fetched once per string-set generation and re-read
/// only when the count changes, GSTATS answers with a different count, Invalidate() was called or
/// a periodic re-validation is due. Whenever names are (re-)read, they are read again after the
/// GSTATS and the values are used only if both reads agree, so a value is never paired with the
/// name of another counter. Steady state: exactly one ioctl (GSTATS) per Sample.
class EthtoolCollector {
 public:
  explicit EthtoolCollector(EthtoolIo& io, EthtoolCollectorOptions options = {});

  /// One GSTATS (plus GSSET_INFO + GSTRINGS + GSTRINGS when the set changed). The names pointer in
  /// the result is shared and stays the same object while the generation is unchanged. Errors:
  /// the ioctl's errno (ENODEV when the device vanished, which also forgets it), or EAGAIN when the
  /// set kept changing during all attempts of this sample.
  Result<CounterSet> Sample(const std::string& ifname);
  /// Makes the next Sample re-read and compare the names (e.g. after a DCB PFC or pause change).
  void Invalidate(const std::string& ifname);
  /// Drops cached strings of a device that vanished.
  void Forget(const std::string& ifname);
  /// Changes exactly when the string set of `ifname` changes; 0 if never sampled (or forgotten).
  /// Values are unique across devices and time (a collector-wide sequence), so a re-created
  /// device never gets a generation that an earlier set had.
  uint64_t Generation(const std::string& ifname) const;

 private:
  struct Cache {
    std::shared_ptr<const std::vector<std::string>> names;
    uint64_t generation = 0;
    uint32_t samples_since_check = 0;
    bool stale = false;
  };

  Result<CounterSet> SampleWithFreshNames(const std::string& ifname);
  Result<std::vector<std::string>> ReadNames(const std::string& ifname);
  CounterSet Adopt(const std::string& ifname, std::vector<std::string> names,
                   std::vector<uint64_t> values);
  Error Fail(const std::string& ifname, Error error);

  EthtoolIo& io_;
  EthtoolCollectorOptions options_;
  std::unordered_map<std::string, Cache> cache_;
  uint64_t last_generation_ = 0;
};

}  // namespace roceqos
