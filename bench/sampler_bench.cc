// One steady-state sample of N devices (fake sources, so no kernel time): what the sampler itself
// costs per period on top of the kernel calls. Figures: docs/performance.md, "Sampler".

#include <benchmark/benchmark.h>

#include "bench/fleet.h"

namespace roceqos {
namespace {

void BM_SamplerSampleOnce(benchmark::State& state) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(static_cast<int>(state.range(0)), clock);
  if (sampler->Latest()->devices.empty() || !sampler->Latest()->devices[0].ethtool) {
    state.SkipWithError("fleet has no ethtool data (capture 24 missing?)");
    return;
  }
  for (auto _ : state) {
    sampler->SampleOnce();
  }
  const auto& first = *sampler->Latest()->devices[0].ethtool;
  state.counters["devices"] = static_cast<double>(state.range(0));
  state.counters["stats_per_device"] = static_cast<double>(first.counters.size());
  state.counters["mapped_per_device"] = static_cast<double>(first.mapped->size());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SamplerSampleOnce)->Arg(1)->Arg(8)->Arg(64);

// A sample that also runs discovery (inventory, selection regexes, device diff), as one sample in
// every --sampler.discovery-interval does (fake inventory: the kernel dumps are not included).
void BM_SamplerSampleOnceAfterDiscovery(benchmark::State& state) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(static_cast<int>(state.range(0)), clock);
  for (auto _ : state) {
    sampler->RequestDiscovery();
    sampler->SampleOnce();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SamplerSampleOnceAfterDiscovery)->Arg(8)->Arg(64);

}  // namespace
}  // namespace roceqos
