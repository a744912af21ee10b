#include "exporter/http/metrics_route.h"

#include <memory>
#include <string>

namespace roceqos {

HttpResponse ServeMetrics(const HttpRequest& request, ExpositionCache& cache) {
  HttpResponse r;
  Result<MetricGroups> groups = CollectGroups(request.query);
  if (!groups) {
    r.status = 400;
    r.body = groups.error().message + "\n";
    return r;
  }
  const bool gzip = AcceptsGzip(request.accept_encoding);
  std::shared_ptr<const Exposition> exposition = cache.Get(gzip, *groups);
  r.content_type = kMetricsContentType;
  // Aliasing pointers: the exposition stays alive as long as the response sends from it.
  r.shared_body = gzip ? std::shared_ptr<const std::string>(exposition, &*exposition->gzip)
                       : std::shared_ptr<const std::string>(exposition, &exposition->text);
  if (gzip) r.headers.emplace_back("Content-Encoding", "gzip");
  r.headers.emplace_back("Vary", "Accept-Encoding");
  return r;
}

}  // namespace roceqos
