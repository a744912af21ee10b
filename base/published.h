#pragma once

// The latest value one thread published, for any number of reader threads: the sampler's
// snapshot (read by every scrape) and the transceiver poller's state (read by the sampler).
//
// Not std::atomic<std::shared_ptr>: in libstdc++ 12 (Debian 12's g++), its load() reads the
// pointer under a lock bit it then clears with a relaxed fetch_sub, so the pointer read and the
// write of a later store() are not ordered (bits/shared_ptr_atomic.h) and ThreadSanitizer reports
// the race (TransceiverPoller's threaded test did). A mutex held for one pointer copy costs the
// same at this rate: one publish per sample, one read per scrape.

#include <memory>
#include <mutex>
#include <utility>

namespace roceqos {

template <typename T>
class Published {
 public:
  std::shared_ptr<const T> Load() const {
    std::lock_guard lock(mu_);
    return value_;
  }

  void Store(std::shared_ptr<const T> value) {
    std::shared_ptr<const T> previous;
    {
      std::lock_guard lock(mu_);
      previous = std::exchange(value_, std::move(value));
    }
    // `previous` may be the last reference: freed here, outside the lock.
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const T> value_;
};

}  // namespace roceqos
