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

#include "exporter/core/snapshot.h"
#include "exporter/render/metrics.h"

namespace roceqos {

struct Exposition {
  std::shared_ptr<const Snapshot> snapshot;  // what the body shows (null before the first sample)
  std::string text;                          // text format 0.0.4
  std::optional<std::string> gzip;           // filled on the first gzip request, under the lock
};

class ExpositionCache {
 public:
  using Latest = std::function<std::shared_ptr<const Snapshot>()>;
  using Serving = std::function<ServingStats()>;
  ExpositionCache(Latest latest, Serving serving)
      : latest_(std::move(latest)), serving_(std::move(serving)) {}

  /// The exposition of the latest snapshot (or a newer one), with `gzip` filled when asked for.
  /// Concurrent callers for a new snapshot wait for one render instead of each rendering.
  std::shared_ptr<const Exposition> Get(bool gzip);

 private:
  bool Fresh(const Snapshot* latest) const;

  Latest latest_;
  Serving serving_;
  std::mutex mutex_;
  std::shared_ptr<Exposition> entry_;  // guarded by mutex_; gzip is written once under it
  double last_render_seconds_ = 0;     // guarded by mutex_
  uint64_t renders_ = 0;               // guarded by mutex_
};

}  // namespace roceqos
