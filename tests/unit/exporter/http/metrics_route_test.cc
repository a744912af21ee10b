#include "exporter/http/metrics_route.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "exporter/render/gzip.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/http_exchange.h"

namespace roceqos {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::shared_ptr<const Snapshot> OneSnapshot() {
  auto s = std::make_shared<Snapshot>();
  DeviceSnapshot d;
  d.device = std::make_shared<const Device>(testing::MakeDevice("eth0", 2));
  s->devices.push_back(d);
  s->sequence = 1;
  s->sampler.samples = 1;
  return s;
}

HttpRequest Request(std::string_view query, std::string_view accept_encoding = "") {
  return HttpRequest{"GET", "/metrics", query, accept_encoding};
}

// The "# TYPE" lines of a body: its families (the serving self-metrics change per render).
std::vector<std::string> TypeLines(std::string_view body) {
  std::vector<std::string> out;
  for (size_t pos = body.find("# TYPE "); pos != std::string_view::npos;
       pos = body.find("# TYPE ", pos + 1)) {
    out.emplace_back(body.substr(pos, body.find('\n', pos) - pos));
  }
  return out;
}

TEST(ServeMetrics, WithoutCollectTheWholeBody) {
  const auto snapshot = OneSnapshot();
  ExpositionCache cache([&] { return snapshot; }, nullptr);
  const HttpResponse r = ServeMetrics(Request(""), cache);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, kMetricsContentType);
  EXPECT_EQ(r.Body(), cache.Get(false)->text) << "the cached body itself, not another render";
  EXPECT_THAT(r.Body(), HasSubstr("\nroce_exporter_samples_total 1\n"));
}

TEST(ServeMetrics, CollectLimitsTheBodyToItsGroups) {
  const auto snapshot = OneSnapshot();
  ExpositionCache cache([&] { return snapshot; }, nullptr);
  const HttpResponse self = ServeMetrics(Request("collect%5B%5D=self"), cache);
  EXPECT_EQ(self.status, 200);
  EXPECT_THAT(self.Body(), HasSubstr("roce_exporter_build_info{"));
  EXPECT_THAT(self.Body(), Not(HasSubstr("roce_netdev_info")));
  const HttpResponse device = ServeMetrics(Request("collect[]=device"), cache);
  EXPECT_EQ(device.status, 200);
  EXPECT_THAT(device.Body(), StartsWith("# HELP roce_netdev_info "));
  EXPECT_THAT(device.Body(), Not(HasSubstr("roce_exporter_")));
  const HttpResponse both = ServeMetrics(Request("collect[]=self&collect[]=device"), cache);
  std::vector<std::string> union_lines = TypeLines(device.Body());
  for (const std::string& line : TypeLines(self.Body())) union_lines.push_back(line);
  EXPECT_EQ(TypeLines(both.Body()), union_lines) << "both groups, in catalogue order";
}

TEST(ServeMetrics, AnUnknownGroupIsA400WithItsReason) {
  const auto snapshot = OneSnapshot();
  ExpositionCache cache([&] { return snapshot; }, nullptr);
  const HttpResponse r = ServeMetrics(Request("collect[]=counterz"), cache);
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.Body(), StartsWith("unknown metric group \"counterz\" in collect[] (known: "));
  EXPECT_THAT(r.Body(), EndsWith(")\n"));
  EXPECT_EQ(r.Body().find('\n'), r.Body().size() - 1) << "one line";
}

TEST(ServeMetrics, GzipIsTheSelectedBodyCompressed) {
  const auto snapshot = OneSnapshot();
  ExpositionCache cache([&] { return snapshot; }, nullptr);
  const HttpResponse r = ServeMetrics(Request("collect[]=self", "gzip"), cache);
  ASSERT_EQ(r.status, 200);
  std::string inflated, error;
  ASSERT_TRUE(GzipDecompress(r.Body(), inflated, error)) << error;
  EXPECT_EQ(inflated, ServeMetrics(Request("collect[]=self"), cache).Body());
  EXPECT_THAT(r.headers,
              ::testing::Contains(std::pair<std::string, std::string>("Content-Encoding", "gzip")));
}

std::string Get(int port, const std::string& target) {
  return HttpExchange(port, "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
}

// The route through the real server: the query string reaches the handler as sent, an unknown
// group is counted as a 400.
TEST(ServeMetrics, ThroughTheHttpServer) {
  const auto snapshot = OneSnapshot();
  ExpositionCache cache([&] { return snapshot; }, nullptr);
  std::vector<HttpRoute> routes;
  routes.push_back({"/metrics", {"GET"}, [&cache](const HttpRequest& request) {
                      return ServeMetrics(request, cache);
                    }});
  HttpCounters counters;
  auto server = HttpServer::Start(HttpOptions{.listen_address = "127.0.0.1:0"}, routes, &counters);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = server.value()->ListeningPorts()[0];
  const std::string all = Get(port, "/metrics");
  EXPECT_THAT(all, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(all, HasSubstr("\r\n\r\n" + cache.Get(false)->text.substr(0, 40)));
  const std::string self = Get(port, "/metrics?collect%5B%5D=self");
  EXPECT_THAT(self, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(self, HasSubstr("roce_exporter_build_info{"));
  EXPECT_THAT(self, Not(HasSubstr("roce_netdev_info")));
  const std::string device = Get(port, "/metrics?collect[]=device");
  EXPECT_THAT(device, HasSubstr("\r\n\r\n# HELP roce_netdev_info "));
  EXPECT_THAT(device, Not(HasSubstr("roce_exporter_")));
  const std::string bad = Get(port, "/metrics?collect[]=nope");
  EXPECT_THAT(bad, StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_THAT(bad, EndsWith("\r\n\r\nunknown metric group \"nope\" in collect[] (known: ethtool, "
                            "rdma, device, transceiver, lldp, process, derived, qos, self, link, "
                            "pcie, gids, attribution)\n"));
  for (const auto& [code, count] : counters.Read().requests_by_code) {
    if (code == "400") {
      EXPECT_EQ(count, 1u);
    }
    if (code == "200") {
      EXPECT_EQ(count, 3u);
    }
  }
}

}  // namespace
}  // namespace roceqos
