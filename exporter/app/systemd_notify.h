#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "base/result.h"

namespace roceqos {

/// Tells the service manager (systemd `Type=notify`, `WatchdogSec=`) about the exporter's life
/// cycle through sd_notify(3). When the process was not started by a service manager
/// (`NOTIFY_SOCKET` unset) every call is a no-op that returns ok, so callers never branch on it.
///
/// Wiring (two calls; see docs/deployment.md):
///   SystemdNotifier notifier;            // once, in main(), before the sampler thread starts
///   notifier.SnapshotPublished();        // in the sampler loop, after each snapshot is published
///   notifier.Stopping();                 // on SIGTERM/SIGINT, before joining threads
///
/// Thread-safe: SnapshotPublished() may run on the sampler thread while Stopping() runs on main.
class SystemdNotifier {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  /// Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID once (sd_watchdog_enabled semantics: a
  /// WATCHDOG_PID naming another process disables the watchdog). `clock` is for tests.
  explicit SystemdNotifier(Clock clock = std::chrono::steady_clock::now);

  /// True when a service manager listens (NOTIFY_SOCKET is set).
  bool active() const { return active_; }
  /// The watchdog timeout systemd enforces (WatchdogSec=), or zero when there is none.
  std::chrono::microseconds watchdog_timeout() const { return watchdog_timeout_; }

  /// Call after every published snapshot. The first call sends READY=1: the exporter is ready once
  /// /metrics has real data. Later calls send WATCHDOG=1, at most once per a quarter of the
  /// watchdog timeout, so a sampler that stops publishing is restarted by systemd while a healthy
  /// one costs one datagram every few seconds. Errors are returned, never thrown; log them
  /// rate-limited.
  Result<void> SnapshotPublished();

  /// Sends STOPPING=1 (once); no WATCHDOG=1 follows it.
  Result<void> Stopping();

 private:
  Result<void> Send(const char* state);

  Clock clock_;
  bool active_ = false;
  std::chrono::microseconds watchdog_timeout_{0};
  std::atomic<bool> ready_sent_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> last_watchdog_ns_{0};
};

}  // namespace roceqos
