#pragma once

// The /metrics body rendered once per published snapshot: scrapes between two samples copy the
// text (or its gzip) instead of rendering and serializing again. A body is never older than the
// snapshot the scrape saw when it arrived: the cache is keyed by the snapshot itself, and an entry
// of an older sequence is replaced, never served.
//
// Rendering ahead: while a scraper is known (scrape_schedule.h), the render worker
// (RenderAheadThread, woken by each publish) renders the new snapshot, and its gzip when that
// scraper asks for gzip, for the selections whose next scrape is expected before the following
// publish. Such a scrape then finds its body ready and copies it. A scrape that finds no body of
// the latest snapshot renders on its path as before, or waits for the render under way, never both
// (docs/decisions.md "Rendering ahead of the scrape").

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exporter/core/snapshot.h"
#include "exporter/render/gzip.h"
#include "exporter/render/metric_groups.h"
#include "exporter/render/metrics.h"
#include "exporter/render/scrape_schedule.h"

namespace roceqos {

struct Exposition {
  std::shared_ptr<const Snapshot> snapshot;   // what the body shows (null before the first sample)
  MetricGroups groups = MetricGroups::All();  // the collect[] groups it holds
  std::string text;                           // text format 0.0.4
  std::optional<std::string> gzip;            // filled once, for a gzip scrape or ahead of one
  // The cache's own bookkeeping (under its lock), for roce_exporter_scrapes_total: whether the
  // render worker produced the text / the gzip ahead of any scrape, and the cache's work count
  // once each was done.
  bool text_ahead = false;
  bool gzip_ahead = false;
  uint64_t text_work = 0;
  uint64_t gzip_work = 0;
};

class ExpositionCache {
 public:
  using Latest = std::function<std::shared_ptr<const Snapshot>()>;
  using Serving = std::function<ServingStats()>;
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  /// `clock` times scrape arrivals (steady_clock::now without one).
  ExpositionCache(Latest latest, Serving serving, Clock clock = nullptr)
      : latest_(std::move(latest)), serving_(std::move(serving)), clock_(std::move(clock)) {}

  /// The exposition of the latest snapshot (or a newer one) limited to `groups`, with `gzip`
  /// filled when asked for. Concurrent callers for a new snapshot wait for one render instead of
  /// each rendering. Records the scrape's arrival; `body`, when given, says where the body came
  /// from.
  std::shared_ptr<const Exposition> Get(bool gzip, MetricGroups groups = MetricGroups::All(),
                                        ScrapeBody* body = nullptr);

  /// After a publish, on the render worker (never the sampler's thread): renders the latest
  /// snapshot, and its gzip where asked for, for each selection and encoding whose next scrape
  /// may get it. Returns the bodies rendered or compressed (0 without a scraper due).
  int RenderAhead();

 private:
  // A few collect[] selections are cached side by side (a site scraping with two jobs uses two);
  // beyond that the oldest entry makes room.
  static constexpr size_t kMaxEntries = 4;

  std::chrono::steady_clock::time_point Now() const;
  std::shared_ptr<Exposition>& EntryFor(MetricGroups groups);
  void Render(std::shared_ptr<Exposition>& entry, std::shared_ptr<const Snapshot> latest,
              MetricGroups groups, bool ahead);
  void Compress(Exposition& entry, bool ahead);
  ScrapeBody Found(const Exposition& entry, bool gzip, uint64_t work_before) const;

  Latest latest_;
  Serving serving_;
  Clock clock_;
  std::mutex mutex_;
  // guarded by mutex_; an entry's gzip is written once under it
  std::vector<std::shared_ptr<Exposition>> entries_;
  GzipCompressor gzip_;                            // guarded by mutex_
  ScrapeSchedule schedule_;                        // guarded by mutex_
  double last_render_seconds_ = 0;                 // guarded by mutex_
  uint64_t renders_ = 0;                           // guarded by mutex_
  std::array<uint64_t, kScrapeBodies> scrapes_{};  // guarded by mutex_; by ScrapeBody
  // The previous snapshot RenderAhead saw (guarded by mutex_): the gap between publishes.
  std::optional<std::chrono::steady_clock::time_point> previous_taken_;
  uint64_t previous_sequence_ = 0;
  // Renders and compressions done; written under mutex_, read before taking it so a scrape can
  // tell a body finished while it waited from one that was ready when it arrived.
  std::atomic<uint64_t> work_{0};
};

/// The render worker: one thread that calls RenderAhead() after each publish. Notify() is what
/// the sampler's publish hook calls: it bumps a count under a mutex no render holds, so a sample
/// never waits for a render.
class RenderAheadThread {
 public:
  explicit RenderAheadThread(ExpositionCache& cache) : cache_(cache) {}
  ~RenderAheadThread() { Stop(); }
  RenderAheadThread(const RenderAheadThread&) = delete;
  RenderAheadThread& operator=(const RenderAheadThread&) = delete;

  void Start();
  void Stop();
  void Notify();

 private:
  void Run();

  ExpositionCache& cache_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t notified_ = 0;  // guarded by mu_
  bool stop_ = false;      // guarded by mu_
  std::thread thread_;
};

}  // namespace roceqos
