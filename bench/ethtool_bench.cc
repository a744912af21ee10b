// ethtool collection cost: the collector's Sample on a real veth next to a bare ETHTOOL_GSTATS
// ioctl on the same veth (the difference is the collector's own overhead), the collector on a
// replayed 751-entry mlx5 set (no kernel), and the name mapping of that set. Figures:
// docs/performance.md, "ethtool collection".

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "collectors/ethtool.h"
#include "collectors/ethtool_map.h"
#include "tests/unit/support/ethtool_capture.h"

namespace roceqos {
namespace {

constexpr char kVeth[] = "rqbench0";

// A veth pair in a private network namespace of this (single-threaded) benchmark process; it
// disappears with the process. Returns an empty string or why it cannot exist.
const std::string& VethSetupError() {
  static const std::string error = [] {
    if (geteuid() != 0) return std::string("needs root to create a veth pair in a private netns");
    if (unshare(CLONE_NEWNET) != 0) return std::string("unshare(CLONE_NEWNET): ") + strerror(errno);
    const std::string command = std::string("ip link add ") + kVeth +
                                " type veth peer name rqbench1 && ip link set " + kVeth +
                                " up && ip link set rqbench1 up";
    if (std::system(command.c_str()) != 0) return "failed: " + command;
    return std::string();
  }();
  return error;
}

void BM_EthtoolCollectorSampleVeth(benchmark::State& state) {
  if (!VethSetupError().empty()) {
    state.SkipWithError(VethSetupError().c_str());
    return;
  }
  auto io = MakeKernelEthtoolIo();
  EthtoolCollector collector(*io);
  auto first = collector.Sample(kVeth);  // reads the string set; steady state from here on
  if (!first.ok()) {
    state.SkipWithError(first.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto sample = collector.Sample(kVeth);
    benchmark::DoNotOptimize(sample);
  }
  state.counters["stats"] = static_cast<double>(first->size());
}
BENCHMARK(BM_EthtoolCollectorSampleVeth);

// The floor: one ETHTOOL_GSTATS into a preallocated buffer, nothing else.
void BM_EthtoolBareGstatsVeth(benchmark::State& state) {
  if (!VethSetupError().empty()) {
    state.SkipWithError(VethSetupError().c_str());
    return;
  }
  auto io = MakeKernelEthtoolIo();
  auto count = io->StatsCount(kVeth);
  if (!count.ok()) {
    state.SkipWithError(count.error().message.c_str());
    return;
  }
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  std::vector<uint64_t> buffer(1 + *count);  // struct ethtool_stats header + n_stats u64
  ifreq request{};
  std::strncpy(request.ifr_name, kVeth, IFNAMSIZ - 1);
  request.ifr_data = reinterpret_cast<char*>(buffer.data());
  for (auto _ : state) {
    ethtool_stats header{};
    header.cmd = ETHTOOL_GSTATS;
    header.n_stats = *count;
    std::memcpy(buffer.data(), &header, sizeof(header));
    if (ioctl(fd, SIOCETHTOOL, &request) != 0) {
      state.SkipWithError(strerror(errno));
      break;
    }
    benchmark::DoNotOptimize(buffer.data());
  }
  close(fd);
  state.counters["stats"] = static_cast<double>(*count);
}
BENCHMARK(BM_EthtoolBareGstatsVeth);

std::vector<std::string> Capture24Names() {
  const auto blocks = testing::ParseEthtoolStats(testing::CaptureBody(testing::ReadCapture("24_")));
  return blocks.empty() ? std::vector<std::string>{} : testing::Names(blocks[0]);
}

// Replays capture 24 (ConnectX-4 Lx, 751 counters) as the kernel would answer, to show the
// collector's user-space cost per steady-state sample at mlx5 size.
class ReplayIo : public EthtoolIo {
 public:
  explicit ReplayIo(std::vector<std::string> names)
      : names_(std::move(names)), values_(names_.size(), 42) {}
  Result<uint32_t> StatsCount(const std::string&) override {
    return static_cast<uint32_t>(names_.size());
  }
  Result<std::vector<std::string>> StatsNames(const std::string&, uint32_t) override {
    return names_;
  }
  Result<std::vector<uint64_t>> StatsValues(const std::string&, uint32_t) override {
    return values_;
  }
  Result<DriverInfo> GetDriverInfo(const std::string&) override { return DriverInfo{}; }

 private:
  std::vector<std::string> names_;
  std::vector<uint64_t> values_;
};

void BM_EthtoolCollectorSampleReplayedMlx5(benchmark::State& state) {
  auto names = Capture24Names();
  if (names.empty()) {
    state.SkipWithError("capture 24 not found (ROCEQOS_CAPTURES_DIR)");
    return;
  }
  ReplayIo io(names);
  EthtoolCollector collector(io);
  if (!collector.Sample("ens1f0np0").ok()) {
    state.SkipWithError("replay failed");
    return;
  }
  for (auto _ : state) {
    auto sample = collector.Sample("ens1f0np0");
    benchmark::DoNotOptimize(sample);
  }
  state.counters["stats"] = static_cast<double>(names.size());
}
BENCHMARK(BM_EthtoolCollectorSampleReplayedMlx5);

void BM_EthtoolMapMlx5NamesCapture24(benchmark::State& state) {
  const auto names = Capture24Names();
  if (names.empty()) {
    state.SkipWithError("capture 24 not found (ROCEQOS_CAPTURES_DIR)");
    return;
  }
  size_t mapped = 0;
  for (auto _ : state) {
    auto counters = MapMlx5EthtoolNames(names);
    mapped = counters.size();
    benchmark::DoNotOptimize(counters);
  }
  state.counters["names"] = static_cast<double>(names.size());
  state.counters["mapped"] = static_cast<double>(mapped);
}
BENCHMARK(BM_EthtoolMapMlx5NamesCapture24);

}  // namespace
}  // namespace roceqos
