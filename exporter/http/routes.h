#pragma once

// The exporter's HTTP routes: the exposition (--web.telemetry-path), /-/healthy, /-/ready, the
// landing page, and the state-changing POST /-/reload, closed unless --web.enable-lifecycle.
// Built from what they read (the latest snapshot, the exposition cache, a policy reload), so unit
// tests reach every answer without a sampler or a QoS engine.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "exporter/core/snapshot.h"
#include "exporter/http/http_server.h"
#include "exporter/render/exposition_cache.h"

namespace roceqos {

struct RouteOptions {
  std::string telemetry_path = "/metrics";  // --web.telemetry-path
  bool enable_lifecycle = false;            // --web.enable-lifecycle: POST /-/reload allowed
  /// --web.health-max-sample-age: /-/healthy fails once the latest snapshot is older (health.h).
  std::chrono::nanoseconds health_max_sample_age = std::chrono::seconds(30);
  /// --lldp.unhealthy-on-stale-socket: /-/healthy also fails while lldpd's socket is a replaced
  /// one (health.h JudgeLldpSocket).
  bool unhealthy_on_stale_lldpd_socket = false;
};

/// The routes; `cache` must outlive them. `latest` returns the latest published snapshot (null
/// before the first), `reload_policy` re-reads the policy for POST /-/reload. /-/healthy counts
/// its start-up grace from this call.
std::vector<HttpRoute> Routes(const RouteOptions& options, ExpositionCache& cache,
                              const std::function<std::shared_ptr<const Snapshot>()>& latest,
                              std::function<Result<void>()> reload_policy);

}  // namespace roceqos
