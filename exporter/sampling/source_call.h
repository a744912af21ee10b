#pragma once

// What the sampler and the transceiver poller share around a kernel source call: the steady clock
// they default to, durations as exported (seconds), and the guard that turns an escaping
// exception into an Error (a collector that throws, bad_alloc in a reply buffer or a bug, fails
// that read, not the thread that made it).

#include <fmt/format.h>

#include <chrono>
#include <exception>

#include "base/result.h"
#include "exporter/core/error_reason.h"

namespace roceqos {

inline std::chrono::nanoseconds SteadyNow() {
  return std::chrono::steady_clock::now().time_since_epoch();
}

inline double Seconds(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

template <typename T, typename F>
Result<T> Guard(F&& call) {
  try {
    return call();
  } catch (const std::exception& e) {
    return MakeError(kErrnoException, fmt::format("exception: {}", e.what()));
  }
}

}  // namespace roceqos
