#include "exporter/render/exposition_cache.h"

#include <algorithm>
#include <chrono>

namespace roceqos {
namespace {

bool Fresh(const Exposition* entry, const Snapshot* latest) {
  if (entry == nullptr) return false;
  const Snapshot* cached = entry->snapshot.get();
  if (cached == latest) return true;  // the entry holds it: the address cannot have been reused
  // A scrape that read Latest() just before a publish may arrive after a newer render: serving
  // the newer body is still never older than what it saw.
  return cached != nullptr && latest != nullptr && cached->sequence > latest->sequence;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::shared_ptr<Exposition>& ExpositionCache::EntryFor(MetricGroups groups) {
  auto found = std::find_if(entries_.begin(), entries_.end(),
                            [&](const auto& e) { return e == nullptr || e->groups == groups; });
  if (found != entries_.end()) return *found;
  if (entries_.size() == kMaxEntries) entries_.erase(entries_.begin());
  entries_.push_back(nullptr);
  return entries_.back();
}

void ExpositionCache::Render(std::shared_ptr<Exposition>& entry,
                             std::shared_ptr<const Snapshot> latest, MetricGroups groups) {
  const auto start = std::chrono::steady_clock::now();
  ServingStats serving = serving_ ? serving_() : ServingStats{};
  serving.render_seconds = last_render_seconds_;
  serving.renders = renders_ + 1;  // this render counts itself
  auto rendered = std::make_shared<Exposition>();
  // The previous body of this selection is about the size of the next one.
  if (entry != nullptr) rendered->text.reserve(entry->text.size() + entry->text.size() / 8);
  MetricSink sink(rendered->text, groups);
  RenderSnapshot(latest.get(), &serving, sink);
  rendered->snapshot = std::move(latest);
  rendered->groups = groups;
  entry = std::move(rendered);
  ++renders_;
  last_render_seconds_ = SecondsSince(start);
}

std::shared_ptr<const Exposition> ExpositionCache::Get(bool gzip, MetricGroups groups) {
  std::shared_ptr<const Snapshot> latest = latest_ ? latest_() : nullptr;
  std::lock_guard lock(mutex_);
  std::shared_ptr<Exposition>& entry = EntryFor(groups);
  if (!Fresh(entry.get(), latest.get())) Render(entry, std::move(latest), groups);
  if (gzip && !entry->gzip) {
    const auto start = std::chrono::steady_clock::now();
    entry->gzip = gzip_.Compress(entry->text);
    last_render_seconds_ += SecondsSince(start);
  }
  return entry;
}

}  // namespace roceqos
