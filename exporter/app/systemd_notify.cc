#include "exporter/app/systemd_notify.h"

#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace roceqos {

namespace {

int64_t Nanoseconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

SystemdNotifier::SystemdNotifier(Clock clock) : clock_(std::move(clock)) {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  active_ = socket != nullptr && socket[0] != '\0';
  uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID is unset or ours.
  if (active_ && sd_watchdog_enabled(/*unset_environment=*/0, &usec) > 0) {
    watchdog_timeout_ = std::chrono::microseconds(usec);
  }
}

Result<void> SystemdNotifier::Send(const char* state) {
  if (!active_) return {};
  // sd_notify returns > 0 when sent, 0 when NOTIFY_SOCKET vanished, < 0 as -errno on failure.
  const int rc = sd_notify(/*unset_environment=*/0, state);
  if (rc < 0) {
    const char* socket = std::getenv("NOTIFY_SOCKET");
    return MakeError(-rc, std::string("sd_notify(") + state + ") to NOTIFY_SOCKET=" +
                              (socket ? socket : "") + ": " + std::strerror(-rc));
  }
  return {};
}

Result<void> SystemdNotifier::SnapshotPublished() {
  if (!active_ || stopping_.load()) return {};
  const int64_t now = Nanoseconds(clock_());
  if (!ready_sent_.exchange(true)) {
    last_watchdog_ns_.store(now);
    return Send("READY=1\nSTATUS=Serving metrics from the first snapshot");
  }
  if (watchdog_timeout_.count() == 0) return {};
  const int64_t min_gap =
      std::chrono::duration_cast<std::chrono::nanoseconds>(watchdog_timeout_).count() / 4;
  int64_t last = last_watchdog_ns_.load();
  if (now - last < min_gap) return {};
  // Only one thread sends per interval even if several publish concurrently.
  if (!last_watchdog_ns_.compare_exchange_strong(last, now)) return {};
  return Send("WATCHDOG=1");
}

Result<void> SystemdNotifier::Stopping() {
  if (!active_ || stopping_.exchange(true)) return {};
  return Send("STOPPING=1\nSTATUS=Shutting down");
}

}  // namespace roceqos
