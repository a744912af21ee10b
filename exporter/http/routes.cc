#include "exporter/http/routes.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "exporter/core/build_info.h"
#include "exporter/http/health.h"
#include "exporter/http/metrics_route.h"

namespace roceqos {
namespace {

std::string LandingPage(const std::string& telemetry_path) {
  return fmt::format(
      "<html><head><title>roce_qos_exporter</title></head><body><h1>roce_qos_exporter</h1>"
      "<p>version {} (revision {})</p><ul><li><a href=\"{}\">{}</a></li>"
      "<li><a href=\"/-/healthy\">/-/healthy</a></li><li><a href=\"/-/ready\">/-/ready</a></li>"
      "</ul></body></html>\n",
      kVersion, kGitRevision, telemetry_path, telemetry_path);
}

HttpResponse Reload(bool enable_lifecycle, const std::function<Result<void>()>& reload_policy) {
  HttpResponse r;
  if (!enable_lifecycle) {
    // As Prometheus answers without --web.enable-lifecycle; SIGHUP still reloads.
    r.status = 403;
    r.body = "Lifecycle API is not enabled (start with --web.enable-lifecycle, or send SIGHUP).\n";
  } else if (Result<void> reloaded = reload_policy(); reloaded) {
    r.body = "policy reloaded\n";
  } else {
    // The last good policy stays in force; say why the new one was refused.
    r.status = 500;
    r.body =
        "policy rejected, the last good policy stays in force: " + reloaded.error().message + "\n";
  }
  return r;
}

HttpResponse Text(int status, std::string body, std::string content_type = "") {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  if (!content_type.empty()) r.content_type = std::move(content_type);
  return r;
}

}  // namespace

std::vector<HttpRoute> Routes(const RouteOptions& options, ExpositionCache& cache,
                              const std::function<std::shared_ptr<const Snapshot>()>& latest,
                              std::function<Result<void>()> reload_policy) {
  std::vector<HttpRoute> routes;
  routes.push_back({"/-/reload",
                    {"POST"},
                    [enabled = options.enable_lifecycle, reload = std::move(reload_policy)](
                        const HttpRequest&) { return Reload(enabled, reload); }});
  routes.push_back({options.telemetry_path, {"GET"}, [&cache](const HttpRequest& request) {
                      return ServeMetrics(request, cache);
                    }});
  // 503 with the reason once the sampler stopped publishing (health.h): the liveness probe's
  // counterpart of the systemd watchdog. With --lldp.unhealthy-on-stale-socket also while the
  // mounted lldpd socket is a replaced one, which only a restart of the container renews.
  routes.push_back({"/-/healthy",
                    {"GET"},
                    [max_age = options.health_max_sample_age,
                     stale_lldpd = options.unhealthy_on_stale_lldpd_socket, latest,
                     started = std::chrono::steady_clock::now()](const HttpRequest&) {
                      std::shared_ptr<const Snapshot> snapshot = latest();
                      HealthVerdict verdict = JudgeHealth(
                          max_age,
                          snapshot ? std::optional(snapshot->taken_at_steady) : std::nullopt,
                          started, std::chrono::steady_clock::now());
                      if (verdict.healthy && stale_lldpd && snapshot)
                        verdict = JudgeLldpSocket(snapshot->lldp.get());
                      return verdict.healthy ? Text(200, "OK\n") : Text(503, verdict.reason + "\n");
                    }});
  routes.push_back({"/-/ready", {"GET"}, [latest](const HttpRequest&) {
                      return latest() ? Text(200, "OK\n") : Text(503, "no sample published yet\n");
                    }});
  routes.push_back({"/", {"GET"}, [page = LandingPage(options.telemetry_path)](const HttpRequest&) {
                      return Text(200, page, "text/html; charset=utf-8");
                    }});
  return routes;
}

}  // namespace roceqos
