#pragma once

// When the scrapes of each collect[] selection and encoding arrived, and whether the next one is
// expected soon: the exposition cache renders a new snapshot ahead of a scrape only when one is.
//
// A scraper is known from its second scrape on (one interval observed). A snapshot published at
// `now` is the body a scrape gets if it arrives before the next publish (`now + gap`), so it is
// worth rendering when a predicted arrival lies between `now - slack` and `now + gap + slack`
// (slack: a 32nd of the interval, or the jitter seen between intervals if larger); from the
// last prediction on it stays worth rendering until the scraper is gone (3 of its intervals
// without a scrape). Predictions are the last arrival
// plus each of the last intervals: one scraper repeats one interval, two Prometheus replicas
// scraping the same target alternate two, and each is predicted.

#include <array>
#include <chrono>
#include <cstddef>
#include <vector>

#include "exporter/render/metric_groups.h"

namespace roceqos {

class ScrapeSchedule {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;

  struct Key {
    MetricGroups groups = MetricGroups::All();
    bool gzip = false;
    bool operator==(const Key&) const = default;
  };

  /// A scrape of `key` arrived at `at`.
  void Arrived(Key key, TimePoint at);

  /// The keys whose next scrape may get the snapshot published at `now`, the previous one having
  /// been published `gap` earlier (0 when unknown).
  std::vector<Key> Due(TimePoint now, Duration gap) const;

  /// Keys with at least one recorded arrival.
  size_t size() const { return scrapers_.size(); }

 private:
  // Beyond this many keys the one scraped longest ago makes room (a few jobs per target).
  static constexpr size_t kMaxScrapers = 8;
  static constexpr size_t kArrivals = 4;  // so up to 3 intervals are predicted

  struct Scraper {
    Key key;
    std::array<TimePoint, kArrivals> arrivals{};  // newest first
    size_t count = 0;                             // valid entries of `arrivals`
  };

  static Duration Jitter(const Scraper& s);
  static bool IsDue(const Scraper& s, TimePoint now, Duration gap);

  std::vector<Scraper> scrapers_;
};

}  // namespace roceqos
