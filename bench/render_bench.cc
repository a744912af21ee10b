// /metrics rendering: snapshot -> MetricFamily (RenderSnapshot) and snapshot -> MetricFamily ->
// Prometheus text (TextSerializer), as one scrape does, for 8 and 64 devices. Figures:
// docs/performance.md, "Scrape".

#include <benchmark/benchmark.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "bench/fleet.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

void BM_RenderFamilies(benchmark::State& state) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(static_cast<int>(state.range(0)), clock);
  const auto snapshot = sampler->Latest();
  size_t series = 0;
  for (auto _ : state) {
    Families families = RenderSnapshot(snapshot.get());
    series = 0;
    for (const auto& f : families) series += f.metric.size();
    benchmark::DoNotOptimize(families);
  }
  state.counters["devices"] = static_cast<double>(state.range(0));
  state.counters["series"] = static_cast<double>(series);
}
BENCHMARK(BM_RenderFamilies)->Arg(8)->Arg(64);

void RenderText(benchmark::State& state, std::optional<std::regex> raw) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(static_cast<int>(state.range(0)), clock, std::move(raw));
  const auto snapshot = sampler->Latest();
  size_t bytes = 0;
  for (auto _ : state) {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, RenderSnapshot(snapshot.get()));
    bytes = out.str().size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["devices"] = static_cast<double>(state.range(0));
  state.counters["body_bytes"] = static_cast<double>(bytes);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// The default: mapped families, RDMA counters, inventory and self-metrics.
void BM_RenderText(benchmark::State& state) { RenderText(state, std::nullopt); }
BENCHMARK(BM_RenderText)->Arg(8)->Arg(64);

// With --collector.ethtool.raw-include='.*': every unmapped ethtool stat too (~700 per device).
void BM_RenderTextAllRaw(benchmark::State& state) { RenderText(state, std::regex(".*")); }
BENCHMARK(BM_RenderTextAllRaw)->Arg(8)->Arg(64);

}  // namespace
}  // namespace roceqos
