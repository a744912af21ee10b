#include "exporter/http/routes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/http/metrics_route.h"

namespace roceqos {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The routes with a snapshot the test controls and a reload that counts its calls.
class RoutesTest : public ::testing::Test {
 protected:
  std::vector<HttpRoute> Make(RouteOptions options = {}) {
    return Routes(
        options, cache_, [this] { return latest_; },
        [this]() -> Result<void> {
          ++reloads_;
          if (reload_error_.empty()) return {};
          return Error{.errnum = 0, .message = reload_error_};
        });
  }
  static HttpResponse Call(const std::vector<HttpRoute>& routes, std::string_view path,
                           std::string_view method = "GET", std::string_view query = "") {
    for (const HttpRoute& route : routes) {
      if (route.path == path) return route.handler(HttpRequest{method, path, query, ""});
    }
    ADD_FAILURE() << "no route for " << path;
    return {};
  }
  static std::vector<std::string> MethodsOf(const std::vector<HttpRoute>& routes,
                                            std::string_view path) {
    for (const HttpRoute& route : routes)
      if (route.path == path) return route.methods;
    return {};
  }
  void Publish(std::chrono::steady_clock::time_point taken_at) {
    auto s = std::make_shared<Snapshot>();
    s->sequence = 1;
    s->taken_at_steady = taken_at;
    latest_ = s;
  }

  std::shared_ptr<const Snapshot> latest_;
  ExpositionCache cache_{[this] { return latest_; }, nullptr};
  int reloads_ = 0;
  std::string reload_error_;
};

TEST_F(RoutesTest, EveryPathWithItsMethods) {
  const auto routes = Make();
  std::vector<std::string> paths;
  for (const HttpRoute& route : routes) paths.push_back(route.path);
  EXPECT_THAT(paths, ElementsAre("/-/reload", "/metrics", "/-/healthy", "/-/ready", "/"));
  EXPECT_THAT(MethodsOf(routes, "/-/reload"), ElementsAre("POST")) << "state-changing: never GET";
  for (const char* path : {"/metrics", "/-/healthy", "/-/ready", "/"}) {
    EXPECT_THAT(MethodsOf(routes, path), ElementsAre("GET")) << path;
  }
}

TEST_F(RoutesTest, ReloadIsClosedByDefault) {
  const HttpResponse r = Call(Make(), "/-/reload", "POST");
  EXPECT_EQ(r.status, 403);
  EXPECT_THAT(r.Body(), HasSubstr("--web.enable-lifecycle"));
  EXPECT_EQ(reloads_, 0) << "a closed endpoint changes nothing";
}

TEST_F(RoutesTest, ReloadWithTheLifecycleApiReloadsAndSaysWhyItRefused) {
  const auto routes = Make(RouteOptions{.enable_lifecycle = true});
  HttpResponse r = Call(routes, "/-/reload", "POST");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Body(), "policy reloaded\n");
  reload_error_ = "policy.yaml:3: unknown key";
  r = Call(routes, "/-/reload", "POST");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.Body(),
            "policy rejected, the last good policy stays in force: policy.yaml:3: unknown key\n");
  EXPECT_EQ(reloads_, 2);
}

TEST_F(RoutesTest, MetricsAtTheTelemetryPathWithItsContentType) {
  Publish(std::chrono::steady_clock::now());
  const auto routes = Make(RouteOptions{.telemetry_path = "/custom"});
  const HttpResponse r = Call(routes, "/custom");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, kMetricsContentType);
  EXPECT_THAT(r.Body(), HasSubstr("# TYPE roce_exporter_samples_total counter\n"));
}

TEST_F(RoutesTest, AnUnknownCollectGroupIsA400) {
  Publish(std::chrono::steady_clock::now());
  const HttpResponse r = Call(Make(), "/metrics", "GET", "collect%5B%5D=counterz");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.Body(), StartsWith("unknown metric group \"counterz\" in collect[]"));
}

TEST_F(RoutesTest, ReadyOnceASnapshotIsPublished) {
  const auto routes = Make();
  HttpResponse r = Call(routes, "/-/ready");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.Body(), "no sample published yet\n");
  Publish(std::chrono::steady_clock::now());
  r = Call(routes, "/-/ready");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Body(), "OK\n");
}

TEST_F(RoutesTest, HealthyUntilTheLatestSnapshotIsTooOld) {
  const auto routes = Make(RouteOptions{.health_max_sample_age = std::chrono::seconds(30)});
  EXPECT_EQ(Call(routes, "/-/healthy").status, 200) << "within the start-up grace";
  Publish(std::chrono::steady_clock::now());
  EXPECT_EQ(Call(routes, "/-/healthy").status, 200);
  Publish(std::chrono::steady_clock::now() - std::chrono::minutes(5));
  const HttpResponse r = Call(routes, "/-/healthy");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.content_type, "text/plain; charset=utf-8");
  EXPECT_THAT(r.Body(), HasSubstr("--web.health-max-sample-age"));
}

TEST_F(RoutesTest, AStaleLldpdSocketFailsHealthOnlyWithItsFlag) {
  const auto with_flag = Make(RouteOptions{.unhealthy_on_stale_lldpd_socket = true});
  const auto without = Make();
  auto lldp = std::make_shared<LldpState>();
  lldp->failure = LldpAbsence::kLldpdSocketStale;
  auto s = std::make_shared<Snapshot>();
  s->sequence = 1;
  s->taken_at_steady = std::chrono::steady_clock::now();
  s->lldp = lldp;
  latest_ = s;
  const HttpResponse r = Call(with_flag, "/-/healthy");
  EXPECT_EQ(r.status, 503);
  EXPECT_THAT(r.Body(), HasSubstr("lldpd's control socket was replaced"));
  EXPECT_EQ(Call(without, "/-/healthy").status, 200) << "systemd: the path is never stale";
  auto answering = std::make_shared<LldpState>();
  answering->view = lldp::LldpdView{};
  s->lldp = answering;
  EXPECT_EQ(Call(with_flag, "/-/healthy").status, 200) << "once lldpd answers again";
}

TEST_F(RoutesTest, TheLandingPageLinksTheTelemetryPath) {
  const HttpResponse r = Call(Make(RouteOptions{.telemetry_path = "/custom"}), "/");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_THAT(r.Body(), HasSubstr("<a href=\"/custom\">/custom</a>"));
}

}  // namespace
}  // namespace roceqos
