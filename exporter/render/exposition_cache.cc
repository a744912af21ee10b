#include "exporter/render/exposition_cache.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include "base/thread_name.h"

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

std::chrono::steady_clock::time_point ExpositionCache::Now() const {
  return clock_ ? clock_() : std::chrono::steady_clock::now();
}

std::shared_ptr<Exposition>& ExpositionCache::EntryFor(MetricGroups groups) {
  auto found = std::find_if(entries_.begin(), entries_.end(),
                            [&](const auto& e) { return e == nullptr || e->groups == groups; });
  if (found != entries_.end()) return *found;
  if (entries_.size() == kMaxEntries) entries_.erase(entries_.begin());
  entries_.push_back(nullptr);
  return entries_.back();
}

void ExpositionCache::Render(std::shared_ptr<Exposition>& entry,
                             std::shared_ptr<const Snapshot> latest, MetricGroups groups,
                             bool ahead) {
  const auto start = std::chrono::steady_clock::now();
  ServingStats serving = serving_ ? serving_() : ServingStats{};
  serving.render_seconds = last_render_seconds_;
  serving.renders = renders_ + 1;  // this render counts itself
  serving.scrapes = scrapes_;
  auto rendered = std::make_shared<Exposition>();
  // The previous body of this selection is about the size of the next one.
  if (entry != nullptr) rendered->text.reserve(entry->text.size() + entry->text.size() / 8);
  MetricSink sink(rendered->text, groups);
  RenderSnapshot(latest.get(), &serving, sink);
  rendered->snapshot = std::move(latest);
  rendered->groups = groups;
  rendered->text_ahead = ahead;
  rendered->text_work = work_.load(std::memory_order_relaxed) + 1;
  entry = std::move(rendered);
  ++renders_;
  work_.store(entry->text_work, std::memory_order_release);
  last_render_seconds_ = SecondsSince(start);
}

void ExpositionCache::Compress(Exposition& entry, bool ahead) {
  const auto start = std::chrono::steady_clock::now();
  entry.gzip = gzip_.Compress(entry.text);
  entry.gzip_ahead = ahead;
  entry.gzip_work = work_.load(std::memory_order_relaxed) + 1;
  work_.store(entry.gzip_work, std::memory_order_release);
  last_render_seconds_ += SecondsSince(start);
}

// Where a body that was ready when the lock was taken came from.
ScrapeBody ExpositionCache::Found(const Exposition& entry, bool gzip, uint64_t work_before) const {
  const uint64_t done = gzip ? entry.gzip_work : entry.text_work;
  if (done > work_before) return ScrapeBody::kWaited;  // finished after the scrape arrived
  return (gzip ? entry.gzip_ahead : entry.text_ahead) ? ScrapeBody::kPrerendered
                                                      : ScrapeBody::kCached;
}

std::shared_ptr<const Exposition> ExpositionCache::Get(bool gzip, MetricGroups groups,
                                                       ScrapeBody* body) {
  const auto arrived = Now();
  std::shared_ptr<const Snapshot> latest = latest_ ? latest_() : nullptr;
  const uint64_t work_before = work_.load(std::memory_order_acquire);
  std::lock_guard lock(mutex_);
  schedule_.Arrived({groups, gzip}, arrived);
  std::shared_ptr<Exposition>& entry = EntryFor(groups);
  std::optional<ScrapeBody> source;
  if (!Fresh(entry.get(), latest.get())) {
    Render(entry, std::move(latest), groups, /*ahead=*/false);
    source = ScrapeBody::kRendered;
  }
  if (gzip && !entry->gzip) {
    Compress(*entry, /*ahead=*/false);
    source = ScrapeBody::kRendered;
  }
  if (!source) source = Found(*entry, gzip, work_before);
  ++scrapes_[static_cast<size_t>(*source)];
  if (body != nullptr) *body = *source;
  return entry;
}

int ExpositionCache::RenderAhead() {
  std::shared_ptr<const Snapshot> latest = latest_ ? latest_() : nullptr;
  if (latest == nullptr) return 0;
  const auto now = Now();
  std::lock_guard lock(mutex_);
  if (latest->sequence == previous_sequence_) return 0;  // seen: a wake-up without a publish
  const auto gap = previous_taken_ ? latest->taken_at_steady - *previous_taken_
                                   : std::chrono::steady_clock::duration::zero();
  previous_taken_ = latest->taken_at_steady;
  previous_sequence_ = latest->sequence;
  int done = 0;
  for (const ScrapeSchedule::Key& key : schedule_.Due(now, gap)) {
    std::shared_ptr<Exposition>& entry = EntryFor(key.groups);
    if (!Fresh(entry.get(), latest.get())) {
      Render(entry, latest, key.groups, /*ahead=*/true);
      ++done;
    }
    if (key.gzip && !entry->gzip) {
      Compress(*entry, /*ahead=*/true);
      ++done;
    }
  }
  return done;
}

void RenderAheadThread::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = NamedThread("roceqos-render", [this] { Run(); });
}

void RenderAheadThread::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RenderAheadThread::Notify() {
  {
    std::lock_guard lock(mu_);
    ++notified_;
  }
  cv_.notify_one();
}

void RenderAheadThread::Run() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || notified_ != seen; });
      if (stop_) return;
      seen = notified_;  // publishes during a render coalesce: only the latest is rendered
    }
    try {
      (void)cache_.RenderAhead();
    } catch (const std::exception&) {
      // Allocation failure: the next scrape renders on its path (counted as rendered) instead.
    }
  }
}

}  // namespace roceqos
