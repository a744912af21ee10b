#pragma once

#include <spdlog/common.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/result.h"
#include "exporter/core/error_reason.h"

namespace roceqos {

/// Decides when a repeating fault is logged, so a device that fails at every 250 ms sample (or a
/// kernel without RDMA netlink) does not flood the log: a fault is logged when its key enters the
/// fault state or its reason changes, then at most once per interval while it persists (with the
/// number of suppressed repeats), and once when it recovers. Not thread-safe: one per thread.
class FaultLogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Action { kNone, kFault, kRepeat, kRecovered };
  struct Decision {
    Action action = Action::kNone;
    uint64_t suppressed = 0;  // repeats not logged since the last logged line of this key
  };

  explicit FaultLogLimiter(Clock::duration repeat_interval);

  /// `key` names the thing that fails ("ethtool eth0"), `reason` its kind of failure.
  Decision Fault(std::string_view key, std::string_view reason, Clock::time_point now);
  /// The key worked this time; reports kRecovered once after a fault.
  Decision Ok(std::string_view key, Clock::time_point now);
  /// Drops a key without logging (its device left the selection).
  void Forget(std::string_view key);
  size_t faulty_keys() const { return faults_.size(); }

 private:
  struct State {
    std::string reason;
    Clock::time_point last_logged;
    uint64_t suppressed = 0;
  };
  Clock::duration interval_;
  std::unordered_map<std::string, State> faults_;
};

/// FaultLogLimiter bound to spdlog.
class FaultLog {
 public:
  explicit FaultLog(FaultLogLimiter::Clock::duration repeat_interval = std::chrono::minutes(5))
      : limiter_(repeat_interval) {}

  void Fault(std::string_view key, std::string_view reason, std::string_view message,
             spdlog::level::level_enum level = spdlog::level::warn,
             FaultLogLimiter::Clock::time_point now = FaultLogLimiter::Clock::now());
  void Ok(std::string_view key,
          FaultLogLimiter::Clock::time_point now = FaultLogLimiter::Clock::now());
  void Forget(std::string_view key) { limiter_.Forget(key); }

 private:
  FaultLogLimiter limiter_;
};

/// A poller's failed read: counted under its reason in `errors` (the poller's
/// roce_exporter_*_read_errors_total) and logged through `log` under `key`. Returns the reason.
ErrorReason CountFailedRead(const Error& error, std::string_view key,
                            std::map<std::string, uint64_t>& errors, FaultLog& log);

}  // namespace roceqos
