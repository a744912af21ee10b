// /metrics rendering, for 8 and 64 mlx5-like devices: the direct text writer /metrics uses
// (BM_RenderText), prometheus-cpp's families and TextSerializer over the same snapshot
// (BM_RenderFamilies, BM_RenderTextSerializer: the tests' path), gzip alone (BM_GzipText), and
// the whole cost of a scrape after a new snapshot, render and gzip (BM_RenderGzip). Figures:
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

// Into `text`, whose capacity stays from the previous render as ExpositionCache reserves it.
void DirectText(const Snapshot* snapshot, const ServingStats* serving, std::string& text) {
  text.clear();
  MetricSink sink(text);
  RenderSnapshot(snapshot, serving, sink);
}

// What /metrics serves besides the snapshot: the HTTP server's counters.
ServingStats Serving() {
  ServingStats serving;
  for (const char* code : {"200", "400", "403", "404", "405", "500", "503", "other"}) {
    serving.requests_by_code.emplace_back(code, 1234);
  }
  return serving;
}

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
  std::string text;
  for (auto _ : state) {
    DirectText(snapshot.get(), nullptr, text);
    benchmark::DoNotOptimize(text.data());
  }
  const size_t bytes = text.size();
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

// The same body through prometheus-cpp: families, then TextSerializer (an std::ostream).
void BM_RenderTextSerializer(benchmark::State& state) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(static_cast<int>(state.range(0)), clock);
  const auto snapshot = sampler->Latest();
  size_t bytes = 0;
  for (auto _ : state) {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, RenderSnapshot(snapshot.get()));
    bytes = out.str().size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["body_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderTextSerializer)->Arg(8)->Arg(64);

// gzip of the default body (what Prometheus asks for): cost and size against the plain body.
void BM_GzipText(benchmark::State& state) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(static_cast<int>(state.range(0)), clock);
  std::string text;
  DirectText(sampler->Latest().get(), nullptr, text);
  GzipCompressor gzip;
  size_t gzip_bytes = 0;
  for (auto _ : state) {
    gzip_bytes = gzip.Compress(text).size();
    benchmark::DoNotOptimize(gzip_bytes);
  }
  state.counters["plain_bytes"] = static_cast<double>(text.size());
  state.counters["gzip_bytes"] = static_cast<double>(gzip_bytes);
  state.counters["gzip_percent"] =
      100.0 * static_cast<double>(gzip_bytes) / static_cast<double>(text.size());
}
BENCHMARK(BM_GzipText)->Arg(8)->Arg(64);

// A Prometheus scrape after a new snapshot: render the text, then gzip it, as ExpositionCache
// does for the first gzip request of a snapshot.
void BM_RenderGzip(benchmark::State& state) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(static_cast<int>(state.range(0)), clock);
  const auto snapshot = sampler->Latest();
  const ServingStats serving = Serving();
  std::string text;
  GzipCompressor gzip;
  size_t gzip_bytes = 0;
  for (auto _ : state) {
    DirectText(snapshot.get(), &serving, text);
    gzip_bytes = gzip.Compress(text).size();
    benchmark::DoNotOptimize(gzip_bytes);
  }
  state.counters["devices"] = static_cast<double>(state.range(0));
  state.counters["gzip_bytes"] = static_cast<double>(gzip_bytes);
}
BENCHMARK(BM_RenderGzip)->Arg(8)->Arg(64);

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
