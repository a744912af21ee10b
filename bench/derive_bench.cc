// Cost of the derivation on the sampling path (docs/performance.md, "## Derivation").

#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <string>
#include <vector>

#include "exporter/signals/derive.h"

namespace roceqos {
namespace {

namespace slot = signal_slot;
constexpr auto kPeriod = std::chrono::milliseconds(250);

// Storm transitions log; the benchmark measures the derivation, not the logger.
const bool kQuietLogs = [] {
  spdlog::set_level(spdlog::level::err);
  return true;
}();

// A ConnectX-like port: PFC on priorities 3 and 4, traffic on every priority, RDMA congestion
// counters, all moving every sample so every code path (rates, ratios, storm verdicts, ECN sums)
// runs.
DeviceSample BusySample() {
  DeviceSample sample;
  sample.identity = {.ifindex = 5, .ethtool_generation = 1, .rdma_device_index = 1, .rdma_port = 1};
  sample.rdma_device = "mlx5_0";
  sample.rdma_port = 1;
  sample.lossless_prios = 0x18;
  for (Direction d : {Direction::kRx, Direction::kTx}) {
    for (int prio = 0; prio < kNumPriorities; ++prio) sample.Set(slot::PrioPackets(d, prio), 1000);
    for (int prio : {3, 4}) {
      sample.Set(slot::PauseFrames(d, prio), 100);
      sample.Set(slot::PauseDurationMicros(d, prio), 100);
    }
  }
  sample.Set(slot::kStormWarningEvents, 0);
  sample.Set(slot::kStormErrorEvents, 0);
  sample.Set(slot::kNpCnpSent, 10);
  sample.Set(slot::kNpEcnMarkedRocePackets, 10);
  sample.Set(slot::kRpCnpHandled, 10);
  return sample;
}

void Step(DeviceSample& sample, int64_t i) {
  sample.time += kPeriod;
  for (size_t s = 0; s < slot::kCount; ++s) {
    // The NIC stall detector stays quiet: a storm per sample is not the steady state.
    if (s == slot::kStormWarningEvents || s == slot::kStormErrorEvents) continue;
    if (sample.present.test(s)) sample.values[s] += 100 + static_cast<uint64_t>(i % 7);
  }
  // Alternate near-storm pausing so storm verdicts flip between condition and clear.
  const uint64_t paused = (i % 8 < 4) ? 240000 : 10000;
  sample.values[slot::PauseDurationMicros(Direction::kTx, 3)] += paused;
}

std::vector<std::string> Names(int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back("ens" + std::to_string(i) + "f0np0");
  return names;
}

// One device, one sample: the per-device work the sampler adds per period.
void BM_ObserveOneDeviceSample(benchmark::State& state) {
  SignalDeriver deriver{DeriveConfig{}};
  DeviceSample sample = BusySample();
  const std::string netdev = "ens1f0np0";
  int64_t i = 0;
  for (auto _ : state) {
    Step(sample, i++);
    deriver.Observe(netdev, sample);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ObserveOneDeviceSample);

// Building the published signals (window scans, series lists) for N devices whose windows are
// full (the steady state after the longest window has elapsed).
void BM_SignalsSnapshot(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  SignalDeriver deriver{DeriveConfig{}};
  const auto names = Names(devices);
  std::vector<DeviceSample> samples(static_cast<size_t>(devices), BusySample());
  const int64_t warmup = 60 * 4 + 8;  // 62 s of samples fill the 1 m window
  for (int64_t i = 0; i < warmup; ++i) {
    for (int d = 0; d < devices; ++d) {
      Step(samples[static_cast<size_t>(d)], i);
      deriver.Observe(names[static_cast<size_t>(d)], samples[static_cast<size_t>(d)]);
    }
  }
  for (auto _ : state) {
    DerivedSignals signals = deriver.Signals();
    benchmark::DoNotOptimize(signals.devices.data());
  }
  state.SetItemsProcessed(state.iterations() * devices);
}
BENCHMARK(BM_SignalsSnapshot)->Arg(1)->Arg(64);

// A full sampling period of 64 devices: 64 observations plus the snapshot of their signals.
void BM_FullPeriod64Devices(benchmark::State& state) {
  constexpr int kDevices = 64;
  SignalDeriver deriver{DeriveConfig{}};
  const auto names = Names(kDevices);
  std::vector<DeviceSample> samples(kDevices, BusySample());
  int64_t i = 0;
  for (; i < 60 * 4 + 8; ++i) {
    for (int d = 0; d < kDevices; ++d) {
      Step(samples[static_cast<size_t>(d)], i);
      deriver.Observe(names[static_cast<size_t>(d)], samples[static_cast<size_t>(d)]);
    }
  }
  for (auto _ : state) {
    for (int d = 0; d < kDevices; ++d) {
      Step(samples[static_cast<size_t>(d)], i);
      deriver.Observe(names[static_cast<size_t>(d)], samples[static_cast<size_t>(d)]);
    }
    ++i;
    DerivedSignals signals = deriver.Signals();
    benchmark::DoNotOptimize(signals.devices.data());
  }
  state.SetItemsProcessed(state.iterations() * kDevices);
}
BENCHMARK(BM_FullPeriod64Devices);

}  // namespace
}  // namespace roceqos
