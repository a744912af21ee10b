#pragma once

// /-/healthy: is the sampler still publishing? The process answering HTTP says nothing about the
// thread that samples (a kernel call that never returns, a deadlock): under systemd the watchdog
// catches that (WATCHDOG=1 is sent per published snapshot), in Kubernetes only a liveness probe
// can, so /-/healthy fails once the latest snapshot is older than a bound. Decided here, apart
// from the route (routes.cc), so unit tests reach the verdict at any time they choose.

#include <chrono>
#include <optional>
#include <string>

#include "exporter/core/lldp_state.h"

namespace roceqos {

/// Never under this: a pass may legitimately hold the sampler for seconds (remediation's budget
/// plus one write and one read, 7 s: docs/remediation.md guard 3), and a liveness probe that
/// restarts a working exporter is worse than one that notices a stuck one a little later.
inline constexpr std::chrono::seconds kMinDefaultHealthMaxSampleAge{30};

/// Before the first snapshot /-/healthy stays 200 at least this long after start: the first
/// sample discovers every device and reads all of its QoS state, which on a large node with slow
/// firmware takes far longer than one period. Equal to the DaemonSet's startupProbe budget.
inline constexpr std::chrono::seconds kMinHealthStartupGrace{120};

/// The default of --web.health-max-sample-age: twice the longest period the sampler backs off to
/// under load (kDefaultMaxPeriodFactor × period), at least kMinDefaultHealthMaxSampleAge.
/// 250 ms (the default period) -> 30 s; 1 s -> 32 s; 10 s -> 320 s.
std::chrono::nanoseconds DefaultHealthMaxSampleAge(std::chrono::nanoseconds sampler_period);

/// The grace before the first snapshot for a bound: max(kMinHealthStartupGrace, bound).
std::chrono::nanoseconds HealthStartupGrace(std::chrono::nanoseconds max_sample_age);

struct HealthVerdict {
  bool healthy = true;
  std::string reason;  // why not, one line without a newline; empty when healthy
};

/// `last_sample`: Snapshot::taken_at_steady of the latest published snapshot, none before the
/// first; `started`: when the process began serving. All times are on the steady clock.
HealthVerdict JudgeHealth(std::chrono::nanoseconds max_sample_age,
                          std::optional<std::chrono::steady_clock::time_point> last_sample,
                          std::chrono::steady_clock::time_point started,
                          std::chrono::steady_clock::time_point now);

/// With --lldp.unhealthy-on-stale-socket: unhealthy while the LLDP poller's latest round (`lldp`,
/// null before the first or with LLDP off) found lldpd's socket replaced (kLldpdSocketStale). A
/// pod that mounts the socket file reads lldpd again only once the container is restarted, which
/// the kubelet does when the liveness probe fails. A stopped lldpd (no socket listening at the
/// path) is never unhealthy: a restart would not reach it, and the PFC metrics must not be lost
/// to restarts over lldpd.
HealthVerdict JudgeLldpSocket(const LldpState* lldp);

}  // namespace roceqos
