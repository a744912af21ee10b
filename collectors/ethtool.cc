#include "collectors/ethtool.h"

#include <fmt/format.h>
#include <linux/ethtool.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <utility>

#include "collectors/ethtool_ioctl.h"

namespace roceqos {
namespace {

// Old kernels ignore the requested count and copy the current set (docs/kernel-interfaces.md
// §4.4); mlx5's set grows by up to 47 entries on a PFC/pause change and by whole channels on
// `ethtool -L`.
constexpr size_t kSlackEntries = 4096;
// No driver has anywhere near this many statistics (mlx5 with 63 channels: ~20 000); a larger
// count is a broken answer, not a reason to map gigabytes.
constexpr uint32_t kMaxStats = 1u << 20;

// Memory whose end abuts a PROT_NONE page. A kernel that writes a set that outgrew even the slack
// stops with EFAULT at the guard page instead of overwriting whatever follows the buffer.
class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  ~GuardedBuffer() { Release(); }

  /// `bytes` writable bytes ending right at the guard page; nullptr with errno set on failure.
  unsigned char* Region(size_t bytes) {
    if (bytes > usable_) {
      const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
      const size_t usable = (bytes + page - 1) / page * page;
      void* base =
          mmap(nullptr, usable + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (base == MAP_FAILED) return nullptr;
      if (mprotect(static_cast<unsigned char*>(base) + usable, page, PROT_NONE) != 0) {
        const int saved = errno;
        munmap(base, usable + page);
        errno = saved;
        return nullptr;
      }
      Release();
      base_ = static_cast<unsigned char*>(base);
      usable_ = usable;
      page_ = page;
    }
    return base_ + (usable_ - bytes);
  }

 private:
  void Release() {
    if (base_ != nullptr) munmap(base_, usable_ + page_);
    base_ = nullptr;
    usable_ = 0;
  }

  unsigned char* base_ = nullptr;
  size_t usable_ = 0;
  size_t page_ = 0;
};

class KernelEthtoolIo final : public EthtoolIo {
 public:
  KernelEthtoolIo() = default;
  KernelEthtoolIo(const KernelEthtoolIo&) = delete;
  KernelEthtoolIo& operator=(const KernelEthtoolIo&) = delete;
  ~KernelEthtoolIo() override = default;

  Result<uint32_t> StatsCount(const std::string& ifname) override {
    // struct ethtool_sset_info is followed by one __u32 per bit set in sset_mask.
    alignas(ethtool_sset_info) unsigned char buffer[sizeof(ethtool_sset_info) + sizeof(uint32_t)]{};
    ethtool_sset_info info{};
    info.cmd = ETHTOOL_GSSET_INFO;
    info.sset_mask = 1ULL << ETH_SS_STATS;
    std::memcpy(buffer, &info, sizeof(info));
    if (auto done = Ioctl(ifname, buffer, "ETHTOOL_GSSET_INFO"); !done) return done.error();
    std::memcpy(&info, buffer, sizeof(info));
    // The kernel clears the bits of sets the driver does not have.
    if ((info.sset_mask & (1ULL << ETH_SS_STATS)) == 0) {
      return MakeError(EOPNOTSUPP,
                       fmt::format("ETHTOOL_GSSET_INFO {}: no ETH_SS_STATS string set", ifname));
    }
    uint32_t count = 0;
    std::memcpy(&count, buffer + offsetof(ethtool_sset_info, data), sizeof(count));
    if (count > kMaxStats) {
      return MakeError(
          E2BIG,
          fmt::format("ETHTOOL_GSSET_INFO {}: implausible ETH_SS_STATS count {}", ifname, count));
    }
    return count;
  }

  Result<std::vector<std::string>> StatsNames(const std::string& ifname, uint32_t count) override {
    const size_t capacity = size_t{count} + kSlackEntries;
    unsigned char* region =
        strings_.Region(sizeof(ethtool_gstrings) + capacity * size_t{ETH_GSTRING_LEN});
    if (region == nullptr) return SystemError(errno, "ETHTOOL_GSTRINGS", ifname);
    ethtool_gstrings header{};
    header.cmd = ETHTOOL_GSTRINGS;
    header.string_set = ETH_SS_STATS;
    header.len = count;
    std::memcpy(region, &header, sizeof(header));
    auto done = Ioctl(ifname, region, "ETHTOOL_GSTRINGS");
    std::memcpy(&header, region, sizeof(header));  // len: what the kernel wrote
    if (header.len > capacity) return Outgrown("ETHTOOL_GSTRINGS", ifname, header.len, capacity);
    if (!done) return done.error();
    std::vector<std::string> names;
    names.reserve(header.len);
    const auto* text = reinterpret_cast<const char*>(region + sizeof(header));
    for (size_t i = 0; i < header.len; ++i) {
      const char* name = text + i * ETH_GSTRING_LEN;  // ETH_GSTRING_LEN bytes, NUL-padded
      names.emplace_back(name, strnlen(name, ETH_GSTRING_LEN));
    }
    return names;
  }

  Result<std::vector<uint64_t>> StatsValues(const std::string& ifname, uint32_t count) override {
    const size_t capacity = size_t{count} + kSlackEntries;
    unsigned char* region = stats_.Region(sizeof(ethtool_stats) + capacity * sizeof(uint64_t));
    if (region == nullptr) return SystemError(errno, "ETHTOOL_GSTATS", ifname);
    ethtool_stats header{};
    header.cmd = ETHTOOL_GSTATS;
    header.n_stats = count;
    std::memcpy(region, &header, sizeof(header));
    auto done = Ioctl(ifname, region, "ETHTOOL_GSTATS");
    std::memcpy(&header, region, sizeof(header));  // n_stats: what the kernel wrote
    if (header.n_stats > capacity) {
      return Outgrown("ETHTOOL_GSTATS", ifname, header.n_stats, capacity);
    }
    if (!done) return done.error();
    std::vector<uint64_t> values(header.n_stats);
    // n_stats 0 (a kernel that refuses a stale count answers nothing): an empty vector's data()
    // may be null, and memcpy with a null pointer is undefined even for 0 bytes (UBSan: nonnull).
    if (!values.empty())
      std::memcpy(values.data(), region + sizeof(header), values.size() * sizeof(uint64_t));
    return values;
  }

  Result<DriverInfo> GetDriverInfo(const std::string& ifname) override {
    ethtool_drvinfo info{};
    info.cmd = ETHTOOL_GDRVINFO;
    if (auto done = Ioctl(ifname, &info, "ETHTOOL_GDRVINFO"); !done) return done.error();
    return DriverInfo{
        .driver = std::string(info.driver, strnlen(info.driver, sizeof(info.driver))),
        .bus_info = std::string(info.bus_info, strnlen(info.bus_info, sizeof(info.bus_info))),
        .fw_version =
            std::string(info.fw_version, strnlen(info.fw_version, sizeof(info.fw_version))),
    };
  }

 private:
  static Error SystemError(int errnum, std::string_view what, const std::string& ifname) {
    return MakeError(errnum, fmt::format("{} {}: {}", what, ifname, std::strerror(errnum)));
  }

  static Error Outgrown(std::string_view what, const std::string& ifname, size_t count,
                        size_t capacity) {
    return MakeError(EOVERFLOW, fmt::format("{} {}: the set grew to {} entries, beyond the buffer "
                                            "of {}; the string set changed",
                                            what, ifname, count, capacity));
  }

  Result<void> Ioctl(const std::string& ifname, void* data, std::string_view what) {
    return ioctl_.Call(ifname, data, what);
  }

  EthtoolSocket ioctl_;
  GuardedBuffer strings_;
  GuardedBuffer stats_;
};

// The set changed under us: GSTRINGS answered another count, or an old kernel outgrew the buffer.
constexpr int kSetChanged = EAGAIN;
constexpr int kRefreshAttempts = 3;

bool IsSetChange(const Error& error) {
  return error.errnum == kSetChanged || error.errnum == EOVERFLOW;
}

}  // namespace

std::unique_ptr<EthtoolIo> MakeKernelEthtoolIo() { return std::make_unique<KernelEthtoolIo>(); }

EthtoolCollector::EthtoolCollector(EthtoolIo& io, EthtoolCollectorOptions options)
    : io_(io), options_(options) {}

Result<CounterSet> EthtoolCollector::Sample(const std::string& ifname) {
  auto cached = cache_.find(ifname);
  if (cached == cache_.end() || cached->second.stale || !cached->second.names) {
    return SampleWithFreshNames(ifname);
  }
  Cache& cache = cached->second;
  const size_t count = cache.names->size();
  auto values = io_.StatsValues(ifname, static_cast<uint32_t>(count));
  if (!values.ok()) {
    if (!IsSetChange(values.error())) return Fail(ifname, values.error());
    return SampleWithFreshNames(ifname);
  }
  // A different n_stats (0 from fixed kernels, the new count from old ones) means a new set.
  if (values->size() != count) return SampleWithFreshNames(ifname);

  if (options_.revalidate_every != 0 && ++cache.samples_since_check >= options_.revalidate_every) {
    cache.samples_since_check = 0;
    auto names = io_.StatsNames(ifname, static_cast<uint32_t>(count));
    if (!names.ok() && !IsSetChange(names.error())) return Fail(ifname, names.error());
    // Read after the GSTATS: equal names mean the values belong to them.
    if (!names.ok() || *names != *cache.names) return SampleWithFreshNames(ifname);
  }
  return CounterSet{cache.names, std::move(*values)};
}

Result<CounterSet> EthtoolCollector::SampleWithFreshNames(const std::string& ifname) {
  for (int attempt = 0; attempt < kRefreshAttempts; ++attempt) {
    auto names = ReadNames(ifname);
    if (!names.ok()) {
      if (IsSetChange(names.error())) continue;
      return Fail(ifname, names.error());
    }
    const auto count = static_cast<uint32_t>(names->size());
    auto values = io_.StatsValues(ifname, count);
    if (!values.ok()) {
      if (IsSetChange(values.error())) continue;
      return Fail(ifname, values.error());
    }
    if (values->size() != count) continue;
    // The set may have changed between GSTRINGS and GSTATS without changing its size (mlx5: PFC
    // moved to another priority). Reading the names again after the GSTATS brackets the values.
    auto check = io_.StatsNames(ifname, count);
    if (!check.ok()) {
      if (IsSetChange(check.error())) continue;
      return Fail(ifname, check.error());
    }
    if (*check != *names) continue;
    return Adopt(ifname, std::move(*names), std::move(*values));
  }
  if (auto cached = cache_.find(ifname); cached != cache_.end()) cached->second.stale = true;
  return MakeError(kSetChanged, fmt::format("ETHTOOL_GSTRINGS {}: the ETH_SS_STATS string set "
                                            "changed during {} consecutive reads",
                                            ifname, kRefreshAttempts));
}

Result<std::vector<std::string>> EthtoolCollector::ReadNames(const std::string& ifname) {
  auto count = io_.StatsCount(ifname);
  if (!count.ok()) return count.error();
  auto names = io_.StatsNames(ifname, *count);
  if (!names.ok()) return names.error();
  if (names->size() != *count) {
    return MakeError(kSetChanged, fmt::format("ETHTOOL_GSTRINGS {}: {} names, GSSET_INFO said {}",
                                              ifname, names->size(), *count));
  }
  return names;
}

CounterSet EthtoolCollector::Adopt(const std::string& ifname, std::vector<std::string> names,
                                   std::vector<uint64_t> values) {
  Cache& cache = cache_[ifname];
  if (!cache.names || *cache.names != names) {
    cache.names = std::make_shared<const std::vector<std::string>>(std::move(names));
    cache.generation = ++last_generation_;
  }
  cache.stale = false;
  cache.samples_since_check = 0;
  return CounterSet{cache.names, std::move(values)};
}

Error EthtoolCollector::Fail(const std::string& ifname, Error error) {
  // The next device with this name may have another driver and another set.
  if (error.errnum == ENODEV) Forget(ifname);
  return error;
}

void EthtoolCollector::Invalidate(const std::string& ifname) {
  if (auto cached = cache_.find(ifname); cached != cache_.end()) cached->second.stale = true;
}

void EthtoolCollector::Forget(const std::string& ifname) { cache_.erase(ifname); }

uint64_t EthtoolCollector::Generation(const std::string& ifname) const {
  auto cached = cache_.find(ifname);
  return cached == cache_.end() ? 0 : cached->second.generation;
}

}  // namespace roceqos
