// /metrics rendering: snapshot -> MetricFamily (RenderSnapshot) and snapshot -> MetricFamily ->
// Prometheus text (TextSerializer), as one scrape does, for 8 and 64 devices. Figures:
// docs/performance.md, "Scrape".

#include <benchmark/benchmark.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "bench/fleet.h"
#include "exporter/render/exposition_cache.h"
#include "exporter/render/gzip.h"
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

// gzip of the default body (what Prometheus asks for): cost and size against the plain body.
void BM_GzipText(benchmark::State& state) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(static_cast<int>(state.range(0)), clock);
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, RenderSnapshot(sampler->Latest().get()));
  const std::string text = std::move(out).str();
  size_t gzip_bytes = 0;
  for (auto _ : state) {
    gzip_bytes = GzipCompress(text).size();
    benchmark::DoNotOptimize(gzip_bytes);
  }
  state.counters["plain_bytes"] = static_cast<double>(text.size());
  state.counters["gzip_bytes"] = static_cast<double>(gzip_bytes);
  state.counters["gzip_percent"] =
      100.0 * static_cast<double>(gzip_bytes) / static_cast<double>(text.size());
}
BENCHMARK(BM_GzipText)->Arg(8)->Arg(64);

// A scrape between two samples: the cached body of the same snapshot, copied once.
void BM_CachedScrape(benchmark::State& state) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(static_cast<int>(state.range(0)), clock);
  ExpositionCache cache([&sampler] { return sampler->Latest(); }, nullptr);
  for (auto _ : state) {
    std::string body = *cache.Get(true)->gzip;
    benchmark::DoNotOptimize(body);
  }
  state.counters["devices"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_CachedScrape)->Arg(8)->Arg(64);

}  // namespace
}  // namespace roceqos
