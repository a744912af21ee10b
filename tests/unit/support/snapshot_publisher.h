#pragma once

// A stand-in for the sampler's publication in exposition-cache tests: the latest snapshot under a
// mutex, as Sampler::Latest() returns it, and the samples count a rendered body shows.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <regex>
#include <string>

#include "exporter/core/snapshot.h"

namespace roceqos::testing {

class SnapshotPublisher {
 public:
  void Publish(uint64_t sequence, std::chrono::steady_clock::time_point taken = {}) {
    auto s = std::make_shared<Snapshot>();
    s->sequence = sequence;
    s->taken_at_steady = taken;
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

/// roce_exporter_samples_total of a rendered body (the snapshot it shows), or -1.
inline long long SamplesIn(const std::string& text) {
  static const std::regex line("\nroce_exporter_samples_total ([0-9]+)\n");
  std::smatch m;
  return std::regex_search(text, m, line) ? std::stoll(m[1]) : -1;
}

}  // namespace roceqos::testing
