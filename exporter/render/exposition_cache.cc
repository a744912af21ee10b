#include "exporter/render/exposition_cache.h"

#include <prometheus/text_serializer.h>

#include <chrono>
#include <sstream>

#include "exporter/render/gzip.h"

namespace roceqos {

bool ExpositionCache::Fresh(const Snapshot* latest) const {
  if (!entry_) return false;
  const Snapshot* cached = entry_->snapshot.get();
  if (cached == latest) return true;  // entry_ holds it: the address cannot have been reused
  // A scrape that read Latest() just before a publish may arrive after a newer render: serving
  // the newer body is still never older than what it saw.
  return cached != nullptr && latest != nullptr && cached->sequence > latest->sequence;
}

std::shared_ptr<const Exposition> ExpositionCache::Get(bool gzip) {
  std::shared_ptr<const Snapshot> latest = latest_ ? latest_() : nullptr;
  std::lock_guard lock(mutex_);
  if (!Fresh(latest.get())) {
    const auto start = std::chrono::steady_clock::now();
    ServingStats serving = serving_ ? serving_() : ServingStats{};
    serving.render_seconds = last_render_seconds_;
    serving.renders = renders_ + 1;  // this render counts itself
    auto entry = std::make_shared<Exposition>();
    std::ostringstream text;
    prometheus::TextSerializer().Serialize(text, RenderSnapshot(latest.get(), &serving));
    entry->text = std::move(text).str();
    entry->snapshot = std::move(latest);
    entry_ = std::move(entry);
    ++renders_;
    last_render_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (gzip && !entry_->gzip) {
    const auto start = std::chrono::steady_clock::now();
    entry_->gzip = GzipCompress(entry_->text);
    last_render_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return entry_;
}

}  // namespace roceqos
