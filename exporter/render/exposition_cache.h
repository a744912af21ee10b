#pragma once

// The /metrics body rendered once per published snapshot: scrapes between two samples copy the
// text (or its gzip) instead of rendering and serializing again. A body is never older than the
// snapshot the scrape saw when it arrived: the cache is keyed by the snapshot itself, and an entry
// of an older sequence is replaced, never served.

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exporter/core/snapshot.h"
#include "exporter/render/gzip.h"
#include "exporter/render/metric_groups.h"
#include "exporter/render/metrics.h"

namespace roceqos {

struct Exposition {
  std::shared_ptr<const Snapshot> snapshot;   // what the body shows (null before the first sample)
  MetricGroups groups = MetricGroups::All();  // the collect[] groups it holds
  std::string text;                           // text format 0.0.4
  std::optional<std::string> gzip;            // filled on the first gzip request, under the lock
};

class ExpositionCache {
 public:
  using Latest = std::function<std::shared_ptr<const Snapshot>()>;
  using Serving = std::function<ServingStats()>;
  ExpositionCache(Latest latest, Serving serving)
      : latest_(std::move(latest)), serving_(std::move(serving)) {}

  /// The exposition of the latest snapshot (or a newer one) limited to `groups`, with `gzip`
  /// filled when asked for. Concurrent callers for a new snapshot wait for one render instead of
  /// each rendering.
  std::shared_ptr<const Exposition> Get(bool gzip, MetricGroups groups = MetricGroups::All());

 private:
  // A few collect[] selections are cached side by side (a site scraping with two jobs uses two);
  // beyond that the oldest entry makes room.
  static constexpr size_t kMaxEntries = 4;

  std::shared_ptr<Exposition>& EntryFor(MetricGroups groups);
  void Render(std::shared_ptr<Exposition>& entry, std::shared_ptr<const Snapshot> latest,
              MetricGroups groups);

  Latest latest_;
  Serving serving_;
  std::mutex mutex_;
  // guarded by mutex_; an entry's gzip is written once under it
  std::vector<std::shared_ptr<Exposition>> entries_;
  GzipCompressor gzip_;             // guarded by mutex_
  double last_render_seconds_ = 0;  // guarded by mutex_
  uint64_t renders_ = 0;            // guarded by mutex_
};

}  // namespace roceqos
