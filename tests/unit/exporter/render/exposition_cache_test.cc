#include "exporter/render/exposition_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <regex>
#include <thread>
#include <vector>

#include "exporter/render/gzip.h"
#include "tests/unit/support/snapshot_publisher.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;

// A publisher as the sampler is: Latest() hands out the last published snapshot.
using testing::SamplesIn;
using Published = testing::SnapshotPublisher;

TEST(ExpositionCache, RendersOncePerSnapshot) {
  Published published;
  published.Publish(1);
  ExpositionCache cache([&] { return published.Latest(); }, nullptr);
  auto first = cache.Get(false);
  auto second = cache.Get(true);
  EXPECT_EQ(first.get(), second.get()) << "the second scrape of one snapshot reuses the render";
  EXPECT_THAT(first->text, HasSubstr("\nroce_exporter_scrape_renders_total 1\n"));
  published.Publish(2);
  auto third = cache.Get(false);
  EXPECT_NE(third.get(), first.get());
  EXPECT_EQ(SamplesIn(third->text), 2);
  EXPECT_THAT(third->text, HasSubstr("\nroce_exporter_scrape_renders_total 2\n"));
}

TEST(ExpositionCache, GzipIsTheTextCompressed) {
  Published published;
  published.Publish(7);
  ExpositionCache cache([&] { return published.Latest(); }, nullptr);
  auto plain_only = cache.Get(false);
  EXPECT_FALSE(plain_only->gzip.has_value()) << "no compression until a client asks for it";
  auto e = cache.Get(true);
  ASSERT_TRUE(e->gzip.has_value());
  std::string inflated, error;
  ASSERT_TRUE(GzipDecompress(*e->gzip, inflated, error)) << error;
  EXPECT_EQ(inflated, e->text);
  EXPECT_LT(e->gzip->size(), e->text.size());
}

TEST(ExpositionCache, BeforeTheFirstSampleTheBodyHasBuildInfoAndServingCounters) {
  ExpositionCache cache([] { return std::shared_ptr<const Snapshot>(); },
                        [] {
                          ServingStats s;
                          s.requests_by_code = {{"200", 3}, {"503", 0}};
                          return s;
                        });
  auto e = cache.Get(false);
  EXPECT_EQ(e->snapshot, nullptr);
  EXPECT_THAT(e->text, HasSubstr("roce_exporter_build_info{"));
  EXPECT_THAT(e->text, HasSubstr("roce_exporter_http_requests_total{code=\"200\"} 3\n"));
  EXPECT_THAT(e->text, HasSubstr("roce_exporter_http_requests_total{code=\"503\"} 0\n"))
      << "counters exist at 0 once their label set is known";
}

// Scrapes race a publisher: every body is of a snapshot at least as new as the one published
// when the scrape began, and shows exactly the snapshot it claims.
TEST(ExpositionCache, NeverServesABodyOlderThanTheSnapshotItClaims) {
  Published published;
  published.Publish(1);
  ExpositionCache cache([&] { return published.Latest(); }, nullptr);
  std::atomic<bool> stop{false};
  std::thread publisher([&] {
    for (uint64_t seq = 2; !stop.load(); ++seq) published.Publish(seq);
  });
  std::atomic<int> violations{0}, scrapes{0};
  std::vector<std::thread> scrapers;
  for (int t = 0; t < 4; ++t) {
    scrapers.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const uint64_t seen = published.Latest()->sequence;
        auto e = cache.Get(t % 2 == 0);
        const long long shown = SamplesIn(e->text);
        if (e->snapshot == nullptr || e->snapshot->sequence < seen ||
            shown != static_cast<long long>(e->snapshot->sequence)) {
          violations.fetch_add(1);
        }
        scrapes.fetch_add(1);
      }
    });
  }
  for (auto& s : scrapers) s.join();
  stop = true;
  publisher.join();
  EXPECT_EQ(scrapes.load(), 1200);
  EXPECT_EQ(violations.load(), 0);
}

// collect[] selections are cached side by side: a scrape of one does not evict another of the
// same snapshot, and each holds only its own families.
TEST(ExpositionCache, EachGroupSelectionHasItsOwnBody) {
  Published published;
  published.Publish(3);
  ExpositionCache cache([&] { return published.Latest(); }, nullptr);
  const MetricGroups self = *MetricGroups::Named("self");
  const MetricGroups device = *MetricGroups::Named("device");
  auto all = cache.Get(false);
  auto only_self = cache.Get(false, self);
  auto only_device = cache.Get(false, device);
  EXPECT_EQ(cache.Get(false).get(), all.get());
  EXPECT_EQ(cache.Get(true, self).get(), only_self.get());
  EXPECT_EQ(only_self->groups, self);
  EXPECT_EQ(SamplesIn(only_self->text), 3);
  EXPECT_EQ(only_device->text, "") << "an empty snapshot has no inventory";
  EXPECT_NE(all->text, "");
  published.Publish(4);
  EXPECT_EQ(SamplesIn(cache.Get(false, self)->text), 4);
}

// Rendering ahead, driven by hand: an injected clock, and RenderAhead() called where the render
// worker would call it after a publish.
class RenderAheadTest : public ::testing::Test {
 protected:
  using Clock = std::chrono::steady_clock;

  void SetUp() override { published_.Publish(1, now_); }
  // Moves the clock to `at` (from the start) and publishes the next snapshot taken then.
  void PublishAt(std::chrono::milliseconds at) {
    now_ = start_ + at;
    published_.Publish(++sequence_, now_);
  }
  ScrapeBody Scrape(std::chrono::milliseconds at, bool gzip = true) {
    now_ = start_ + at;
    ScrapeBody body{};
    last_ = cache_.Get(gzip, MetricGroups::All(), &body);
    return body;
  }

  const Clock::time_point start_{std::chrono::seconds(1000)};
  Clock::time_point now_ = start_;
  uint64_t sequence_ = 1;
  Published published_;
  ExpositionCache cache_{[this] { return published_.Latest(); }, nullptr, [this] { return now_; }};
  std::shared_ptr<const Exposition> last_;
};

TEST_F(RenderAheadTest, NoRenderAheadWithoutAScraper) {
  PublishAt(std::chrono::milliseconds(250));
  EXPECT_EQ(cache_.RenderAhead(), 0);
  EXPECT_EQ(Scrape(std::chrono::milliseconds(300)), ScrapeBody::kRendered);
  PublishAt(std::chrono::milliseconds(500));
  EXPECT_EQ(cache_.RenderAhead(), 0) << "one scrape predicts no next one";
}

// A 15 s scraper and a snapshot every 250 ms: only the snapshots published in the window before
// its next scrape (one period plus a 32nd of its interval) are rendered and compressed ahead,
// and that scrape copies the last of them without rendering.
TEST_F(RenderAheadTest, TheNextScrapeFindsItsBodyReady) {
  using std::chrono::milliseconds;
  EXPECT_EQ(Scrape(milliseconds(0)), ScrapeBody::kRendered);
  PublishAt(milliseconds(10000));
  EXPECT_EQ(cache_.RenderAhead(), 0) << "one scrape predicts nothing";
  EXPECT_EQ(Scrape(milliseconds(15000)), ScrapeBody::kRendered) << "no interval known yet";
  const std::chrono::microseconds window_start =
      milliseconds(30000) - milliseconds(250) - std::chrono::microseconds(468750);
  int ahead = 0;
  for (milliseconds at(15250); at < milliseconds(30000); at += milliseconds(250)) {
    PublishAt(at);
    const int rendered = cache_.RenderAhead();
    EXPECT_EQ(rendered, at >= window_start ? 2 : 0) << at.count() << " ms";
    ahead += rendered;
  }
  EXPECT_EQ(ahead, 4) << "2 snapshots (29.5 s and 29.75 s), text and gzip each";
  EXPECT_EQ(cache_.RenderAhead(), 0) << "a wake-up without a publish renders nothing";
  EXPECT_EQ(Scrape(milliseconds(30000)), ScrapeBody::kPrerendered);
  EXPECT_EQ(last_->snapshot->sequence, sequence_);
  ASSERT_TRUE(last_->gzip.has_value());
  std::string inflated, error;
  ASSERT_TRUE(GzipDecompress(*last_->gzip, inflated, error)) << error;
  EXPECT_EQ(inflated, last_->text);
  EXPECT_EQ(Scrape(milliseconds(30010)), ScrapeBody::kPrerendered)
      << "a second scrape of that snapshot copies the same body";
  // The served body counts the two scrapes that rendered on their path, as of its render.
  EXPECT_THAT(last_->text, HasSubstr("\nroce_exporter_scrapes_total{body=\"rendered\"} 2\n"));
  EXPECT_THAT(last_->text, HasSubstr("\nroce_exporter_scrapes_total{body=\"prerendered\"} 0\n"));
  EXPECT_THAT(last_->text, HasSubstr("\nroce_exporter_scrape_renders_total 4\n"));
}

// The body rendered ahead is of the snapshot then latest: a scrape after a newer publish
// renders that one instead.
TEST_F(RenderAheadTest, AStaleBodyIsNeverServed) {
  Scrape(std::chrono::seconds(0));
  Scrape(std::chrono::seconds(15));
  PublishAt(std::chrono::milliseconds(29800));
  ASSERT_EQ(cache_.RenderAhead(), 2);
  PublishAt(std::chrono::milliseconds(29990));  // the worker has not run for this one yet
  EXPECT_EQ(Scrape(std::chrono::seconds(30)), ScrapeBody::kRendered);
  EXPECT_EQ(last_->snapshot->sequence, sequence_);
  EXPECT_EQ(SamplesIn(last_->text), static_cast<long long>(sequence_));
}

// Only the encoding a scraper asked for is prepared: a plain scraper gets no gzip ahead, and a
// gzip scrape of that body compresses on its path.
TEST_F(RenderAheadTest, OnlyTheEncodingsScrapedAreRenderedAhead) {
  Scrape(std::chrono::seconds(0), /*gzip=*/false);
  Scrape(std::chrono::seconds(15), /*gzip=*/false);
  PublishAt(std::chrono::milliseconds(29900));
  EXPECT_EQ(cache_.RenderAhead(), 1);
  EXPECT_EQ(Scrape(std::chrono::seconds(30), /*gzip=*/false), ScrapeBody::kPrerendered);
  EXPECT_FALSE(last_->gzip.has_value());
  EXPECT_EQ(Scrape(std::chrono::milliseconds(30100), /*gzip=*/true), ScrapeBody::kRendered);
  EXPECT_EQ(Scrape(std::chrono::milliseconds(30200), /*gzip=*/true), ScrapeBody::kCached);
}

TEST_F(RenderAheadTest, AScraperGoneForThreeIntervalsIsNoLongerRenderedFor) {
  Scrape(std::chrono::seconds(0));
  Scrape(std::chrono::seconds(15));
  PublishAt(std::chrono::seconds(50));
  EXPECT_EQ(cache_.RenderAhead(), 2) << "late, still expected";
  PublishAt(std::chrono::seconds(61));
  EXPECT_EQ(cache_.RenderAhead(), 0);
}

// Scrapes of one new snapshot from many threads: one render, every scrape gets that body.
TEST(ExpositionCache, ConcurrentScrapesOfANewSnapshotRenderOnce) {
  Published published;
  published.Publish(1);
  ExpositionCache cache([&] { return published.Latest(); }, nullptr);
  (void)cache.Get(true);
  published.Publish(2);
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<const Exposition>> got(kThreads);
  std::vector<ScrapeBody> bodies(kThreads);
  std::vector<std::thread> scrapers;
  for (int t = 0; t < kThreads; ++t) {
    scrapers.emplace_back([&, t] { got[t] = cache.Get(true, MetricGroups::All(), &bodies[t]); });
  }
  for (auto& s : scrapers) s.join();
  EXPECT_EQ(std::count(bodies.begin(), bodies.end(), ScrapeBody::kRendered), 1);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(got[t].get(), got[0].get()) << t;
    EXPECT_EQ(got[t]->snapshot->sequence, 2u);
  }
}

TEST(Gzip, GarbageIsAnErrorNotACrash) {
  std::string out, error;
  EXPECT_FALSE(GzipDecompress("not gzip at all", out, error));
  EXPECT_FALSE(error.empty());
  const std::string whole = GzipCompress("hello hello hello\n");
  EXPECT_FALSE(GzipDecompress(whole.substr(0, whole.size() / 2), out, error)) << "truncated";
  ASSERT_TRUE(GzipDecompress(whole, out, error)) << error;
  EXPECT_EQ(out, "hello hello hello\n");
}

}  // namespace
}  // namespace roceqos
