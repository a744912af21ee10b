// The render worker's thread against scrapes and a publisher (threaded_tests: run under TSan by
// scripts/test-sanitizers).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <regex>
#include <thread>
#include <vector>

#include "exporter/render/exposition_cache.h"
#include "tests/unit/support/snapshot_publisher.h"

namespace roceqos {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

using testing::SamplesIn;
using Publisher = testing::SnapshotPublisher;

// Notify() wakes the worker, which renders the new snapshot for a known scraper; the scrape that
// follows copies that body (or waits for its render to end) instead of rendering.
TEST(RenderAheadThread, RendersAfterANotifiedPublish) {
  const steady_clock::time_point start{std::chrono::seconds(1000)};
  std::atomic<steady_clock::rep> now{start.time_since_epoch().count()};
  const auto clock = [&] { return steady_clock::time_point(steady_clock::duration(now.load())); };
  const auto set_clock = [&](milliseconds at) { now = (start + at).time_since_epoch().count(); };
  const std::thread::id test_thread = std::this_thread::get_id();
  std::promise<void> worker_rendered;
  std::atomic<bool> signalled{false};
  Publisher publisher;
  publisher.Publish(1, start);
  ExpositionCache cache(
      [&] { return publisher.Latest(); },
      [&] {
        if (std::this_thread::get_id() != test_thread && !signalled.exchange(true))
          worker_rendered.set_value();
        return ServingStats{};
      },
      clock);
  RenderAheadThread worker(cache);
  worker.Start();
  (void)cache.Get(true);
  set_clock(milliseconds(15000));
  (void)cache.Get(true);
  set_clock(milliseconds(29900));
  publisher.Publish(2, start + milliseconds(29900));
  worker.Notify();
  // A bound for a broken worker, not a synchronisation: the promise is what the test waits on.
  ASSERT_EQ(worker_rendered.get_future().wait_for(std::chrono::seconds(30)),
            std::future_status::ready);
  set_clock(milliseconds(30000));
  ScrapeBody body{};
  auto got = cache.Get(true, MetricGroups::All(), &body);
  EXPECT_NE(body, ScrapeBody::kRendered);
  EXPECT_EQ(got->snapshot->sequence, 2u);
  ASSERT_TRUE(got->gzip.has_value());
  worker.Stop();
}

// Scrapes race a publisher and the worker: every body is of a snapshot at least as new as the
// one published when the scrape began and shows exactly that snapshot, and every scrape is
// counted once under one source.
TEST(RenderAheadThread, ScrapesPublishesAndRendersAheadRace) {
  Publisher publisher;
  publisher.Publish(1, steady_clock::now());
  ExpositionCache cache([&] { return publisher.Latest(); }, nullptr);
  RenderAheadThread worker(cache);
  worker.Start();
  std::atomic<bool> stop{false};
  std::thread publishing([&] {
    for (uint64_t seq = 2; !stop.load(); ++seq) {
      publisher.Publish(seq, steady_clock::now());
      worker.Notify();
      std::this_thread::yield();
    }
  });
  // A second caller of RenderAhead, so renders ahead and scrapes overlap whatever the schedule.
  std::thread ahead([&] {
    while (!stop.load()) (void)cache.RenderAhead();
  });
  std::atomic<int> violations{0};
  std::vector<std::thread> scrapers;
  constexpr int kScrapers = 4, kScrapes = 200;
  std::array<std::atomic<int>, kScrapeBodies> by_body{};
  for (int t = 0; t < kScrapers; ++t) {
    scrapers.emplace_back([&, t] {
      for (int i = 0; i < kScrapes; ++i) {
        const uint64_t seen = publisher.Latest()->sequence;
        ScrapeBody body{};
        auto e = cache.Get(t % 2 == 0, MetricGroups::All(), &body);
        by_body[static_cast<size_t>(body)].fetch_add(1);
        if (e->snapshot->sequence < seen ||
            SamplesIn(e->text) != static_cast<long long>(e->snapshot->sequence) ||
            (t % 2 == 0 && !e->gzip)) {
          violations.fetch_add(1);
        }
      }
    });
  }
  for (auto& s : scrapers) s.join();
  stop = true;
  publishing.join();
  ahead.join();
  worker.Stop();
  EXPECT_EQ(violations.load(), 0);
  int total = 0;
  for (const auto& n : by_body) total += n.load();
  EXPECT_EQ(total, kScrapers * kScrapes);
}

}  // namespace
}  // namespace roceqos
