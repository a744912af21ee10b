#include "exporter/render/exposition_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <regex>
#include <thread>
#include <vector>

#include "exporter/render/gzip.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;

// A publisher as the sampler is: Latest() hands out the last published snapshot.
class Published {
 public:
  void Publish(uint64_t sequence) {
    auto s = std::make_shared<Snapshot>();
    s->sequence = sequence;
    s->sampler.samples = sequence;  // rendered as roce_exporter_samples_total
    std::lock_guard lock(mutex_);
    latest_ = std::move(s);
  }
  std::shared_ptr<const Snapshot> Latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const Snapshot> latest_;
};

// roce_exporter_samples_total of a rendered body, or -1.
long long SamplesIn(const std::string& text) {
  static const std::regex line("\nroce_exporter_samples_total ([0-9]+)\n");
  std::smatch m;
  return std::regex_search(text, m, line) ? std::stoll(m[1]) : -1;
}

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
