#include "exporter/render/scrape_schedule.h"

#include <algorithm>

namespace roceqos {
namespace {

// Scrapes of one key closer than this are one round (two clients at once, a retry), not an
// interval: recording them would predict the next scrape at once.
constexpr std::chrono::milliseconds kSameRound{1};

}  // namespace

void ScrapeSchedule::Arrived(Key key, TimePoint at) {
  auto found = std::find_if(scrapers_.begin(), scrapers_.end(),
                            [&](const Scraper& s) { return s.key == key; });
  if (found == scrapers_.end()) {
    if (scrapers_.size() == kMaxScrapers) {
      scrapers_.erase(std::min_element(
          scrapers_.begin(), scrapers_.end(),
          [](const Scraper& a, const Scraper& b) { return a.arrivals[0] < b.arrivals[0]; }));
    }
    scrapers_.push_back(Scraper{.key = key});
    found = scrapers_.end() - 1;
  } else if (at - found->arrivals[0] < kSameRound) {
    return;
  }
  Scraper& s = *found;
  std::move_backward(s.arrivals.begin(), s.arrivals.end() - 1, s.arrivals.end());
  s.arrivals[0] = at;
  s.count = std::min(s.count + 1, kArrivals);
}

// The largest difference between two recent intervals of about the same length (within 1.5x):
// the alternating intervals of two replicas are two cadences, not jitter.
ScrapeSchedule::Duration ScrapeSchedule::Jitter(const Scraper& s) {
  Duration jitter{0};
  for (size_t k = 1; k < s.count; ++k) {
    for (size_t j = k + 1; j < s.count; ++j) {
      const Duration a = s.arrivals[k - 1] - s.arrivals[k], b = s.arrivals[j - 1] - s.arrivals[j];
      const Duration shorter = std::min(a, b), longer = std::max(a, b);
      if (longer * 2 <= shorter * 3) jitter = std::max(jitter, longer - shorter);
    }
  }
  return jitter;
}

bool ScrapeSchedule::IsDue(const Scraper& s, TimePoint now, Duration gap) {
  if (s.count < 2) return false;  // no interval yet: a single scrape predicts nothing
  const TimePoint last = s.arrivals[0];
  Duration longest{0};
  for (size_t k = 1; k < s.count; ++k)
    longest = std::max(longest, s.arrivals[k - 1] - s.arrivals[k]);
  if (now - last > 3 * longest) return false;  // the scraper is gone
  // Prometheus scrapes a target at a fixed offset of its interval; the slack absorbs the
  // connection and the scheduling around it (~470 ms at 15 s, where Prometheus is off by a few
  // ms), or the observed jitter of a looser client. A scrape earlier than that renders on its
  // path; a late one stays covered below. Every gap of slack is one more render per scrape.
  const Duration slack = std::max(longest / 32, Jitter(s));
  TimePoint latest_prediction = last;
  for (size_t k = 1; k < s.count; ++k) {
    const TimePoint predicted = last + (s.arrivals[k - 1] - s.arrivals[k]);
    latest_prediction = std::max(latest_prediction, predicted);
    if (now >= predicted - gap - slack && now <= predicted + slack) return true;
  }
  return now >= latest_prediction - gap - slack;  // late: until it comes or is gone
}

std::vector<ScrapeSchedule::Key> ScrapeSchedule::Due(TimePoint now, Duration gap) const {
  std::vector<Key> due;
  for (const Scraper& s : scrapers_) {
    if (IsDue(s, now, gap)) due.push_back(s.key);
  }
  return due;
}

}  // namespace roceqos
