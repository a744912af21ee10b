#pragma once

// The /metrics handler (--web.telemetry-path): the exposition cache's body for the request's
// collect[] groups and encoding.

#include <string_view>

#include "exporter/http/http_server.h"
#include "exporter/render/exposition_cache.h"

namespace roceqos {

inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

/// The body of the latest snapshot, limited to the `collect[]` groups of the query (all without
/// one; an unknown group is a 400 that names it), gzip when the client accepts it, with Vary
/// either way so a cache between us and the client keeps the two apart. The body is the cache's
/// own: no copy per request.
HttpResponse ServeMetrics(const HttpRequest& request, ExpositionCache& cache);

}  // namespace roceqos
