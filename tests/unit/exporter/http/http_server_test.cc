#include "exporter/http/http_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>

#include "tests/unit/support/http_exchange.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A connected TCP socket to the loopback address of `family` (-1 when it cannot connect).
int ConnectLoopback(int family, int port) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    v6->sin6_addr = in6addr_loopback;
    len = sizeof *v6;
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof *v4;
  }
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

// GET /metrics over `family`'s loopback; the whole answer ("" when it cannot connect).
std::string GetOver(int family, int port) {
  const int fd = ConnectLoopback(family, port);
  if (fd < 0) return "";
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    answer.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return answer;
}

std::vector<HttpRoute> MetricsRoute() {
  std::vector<HttpRoute> routes;
  routes.push_back({"/metrics", {"GET"}, [](const HttpRequest&) {
                      HttpResponse r;
                      r.body = "up 1\n";
                      return r;
                    }});
  return routes;
}

std::string Get(int port, const std::string& method, const std::string& path) {
  return HttpExchange(port,
                      method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}

// One server for the suite, as the exporter has one.
class HttpServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::vector<HttpRoute> routes;
    routes.push_back({"/metrics", {"GET"}, [](const HttpRequest&) {
                        HttpResponse r;
                        r.content_type = "text/plain; version=0.0.4; charset=utf-8";
                        r.body = "up 1\n";
                        return r;
                      }});
    routes.push_back({"/-/reload", {"POST"}, [](const HttpRequest&) {
                        HttpResponse r;
                        r.body = "reloaded\n";
                        return r;
                      }});
    routes.push_back({"/boom", {"GET"}, [](const HttpRequest&) -> HttpResponse {
                        throw std::runtime_error("handler bug");
                      }});
    auto server = HttpServer::Start(HttpOptions{.listen_address = "127.0.0.1:0"}, routes);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(server.value()).release();
    ASSERT_FALSE(server_->ListeningPorts().empty());
    port_ = server_->ListeningPorts()[0];
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_GT(port_, 0) << "the suite's server did not start"; }

  static inline HttpServer* server_ = nullptr;
  static inline int port_ = 0;
};

TEST_F(HttpServerTest, ServesARouteWithItsContentType) {
  const std::string r = Get(port_, "GET", "/metrics");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(r, HasSubstr("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(r, HasSubstr("Content-Length: 5\r\n"));
  EXPECT_THAT(r, ::testing::EndsWith("\r\n\r\nup 1\n"));
}

TEST_F(HttpServerTest, QueryStringsDoNotChangeTheRoute) {
  EXPECT_THAT(Get(port_, "GET", "/metrics?x=1"), StartsWith("HTTP/1.1 200 OK\r\n"));
}

TEST_F(HttpServerTest, HeadAnswersLikeGetWithoutBody) {
  const std::string r = Get(port_, "HEAD", "/metrics");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(r, ::testing::EndsWith("\r\n\r\n"));
}

TEST_F(HttpServerTest, UnknownPathsAre404) {
  EXPECT_THAT(Get(port_, "GET", "/nope"), StartsWith("HTTP/1.1 404 "));
  EXPECT_THAT(Get(port_, "GET", "/metrics/extra"), StartsWith("HTTP/1.1 404 "));
  EXPECT_THAT(Get(port_, "GET", "/"), StartsWith("HTTP/1.1 404 ")) << "no route for / here";
}

TEST_F(HttpServerTest, WrongMethodsAre405WithAllow) {
  const std::string r = Get(port_, "POST", "/metrics");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 405 "));
  EXPECT_THAT(r, HasSubstr("Allow: GET, HEAD\r\n"));
  EXPECT_THAT(Get(port_, "DELETE", "/metrics"), StartsWith("HTTP/1.1 405 "));
  EXPECT_THAT(Get(port_, "GET", "/-/reload"), StartsWith("HTTP/1.1 405 "));
  EXPECT_THAT(
      HttpExchange(port_, "POST /-/reload HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"),
      StartsWith("HTTP/1.1 200 "));
}

TEST_F(HttpServerTest, AThrowingHandlerIsA500AndTheServerStaysUp) {
  EXPECT_THAT(Get(port_, "GET", "/boom"), StartsWith("HTTP/1.1 500 "));
  EXPECT_THAT(Get(port_, "GET", "/metrics"), StartsWith("HTTP/1.1 200 "));
}

TEST_F(HttpServerTest, MalformedAndOversizedRequestsGet4xx) {
  const std::string huge(64 * 1024, 'a');
  const std::string big_header =
      HttpExchange(port_, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + huge + "\r\n\r\n");
  EXPECT_THAT(big_header, ::testing::MatchesRegex("HTTP/1\\.[01] 4[0-9][0-9] (.|\r|\n)*"));
  const std::string garbage = HttpExchange(port_, "\x01\x02 garbage\r\n\r\n");
  EXPECT_THAT(garbage, ::testing::MatchesRegex("HTTP/1\\.[01] 4[0-9][0-9] (.|\r|\n)*"));
  EXPECT_THAT(Get(port_, "GET", "/metrics"), StartsWith("HTTP/1.1 200 ")) << "still serving";
}

TEST_F(HttpServerTest, AnOverlongRequestLineIsRefusedAndTheServerStaysUp) {
  // Longer than max_request_size (8 KiB): a 414 as soon as the line passes the bound.
  const std::string r =
      HttpExchange(port_, "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(r, ::testing::AnyOf(::testing::MatchesRegex("HTTP/1\\.[01] 4[0-9][0-9] (.|\r|\n)*"),
                                  ::testing::IsEmpty()));
  EXPECT_THAT(r, ::testing::Not(HasSubstr("200 OK")));
  EXPECT_THAT(Get(port_, "GET", "/metrics"), StartsWith("HTTP/1.1 200 ")) << "still serving";
}

TEST(HttpAcceptsGzip, FollowsRfc9110Qvalues) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("GZip"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("deflate, gzip;q=1.0, *;q=0.5"));  // Prometheus sends "gzip"
  EXPECT_TRUE(AcceptsGzip("br ; q=0.9 , gzip ; q=0.001"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("deflate, br"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.000"));
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0, *")) << "an explicit gzip;q=0 beats the wildcard";
  EXPECT_FALSE(AcceptsGzip("gzipper"));
}

TEST(HttpAcceptsGzip, MalformedQvaluesNeverSelectGzip) {
  EXPECT_FALSE(AcceptsGzip("gzip;q="));
  EXPECT_FALSE(AcceptsGzip("gzip;q=abc"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=2"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=-1"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.5x"));
  EXPECT_FALSE(AcceptsGzip(",,;;q=,"));
}

// --web.max-requests: with one request in a handler, the next is a 503 at once (not queued), the
// rejection is counted, and the cap frees again when the first finishes.
TEST(HttpServer, RequestsBeyondTheCapAreA503AtOnce) {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<HttpRoute> routes;
  routes.push_back({"/slow", {"GET"}, [&](const HttpRequest&) {
                      entered.set_value();
                      released.wait();
                      HttpResponse r;
                      r.body = "done\n";
                      return r;
                    }});
  routes.push_back({"/fast", {"GET"}, [](const HttpRequest&) { return HttpResponse{}; }});
  HttpCounters counters;
  auto server = HttpServer::Start(HttpOptions{.listen_address = "127.0.0.1:0", .max_requests = 1},
                                  routes, &counters);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = server.value()->ListeningPorts()[0];
  auto slow = std::async(std::launch::async, [&] { return Get(port, "GET", "/slow"); });
  entered.get_future().wait();
  const auto start = std::chrono::steady_clock::now();
  const std::string rejected = Get(port, "GET", "/fast");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_THAT(rejected, StartsWith("HTTP/1.1 503 "));
  EXPECT_THAT(rejected, HasSubstr("--web.max-requests=1"));
  EXPECT_LT(took, std::chrono::milliseconds(500));
  EXPECT_EQ(counters.rejected.load(), 1u);
  EXPECT_EQ(counters.in_flight.load(), 1);
  release.set_value();
  EXPECT_THAT(slow.get(), StartsWith("HTTP/1.1 200 "));
  EXPECT_THAT(Get(port, "GET", "/fast"), StartsWith("HTTP/1.1 200 "));
  const ServingStats stats = counters.Read();
  EXPECT_EQ(stats.in_flight, 0);
  for (const auto& [code, count] : stats.requests_by_code) {
    if (code == "200") {
      EXPECT_EQ(count, 2u);
    }
    if (code == "503") {
      EXPECT_EQ(count, 1u);
    }
    if (code == "404") {
      EXPECT_EQ(count, 0u) << "every known code is there from the start";
    }
  }
  EXPECT_EQ(stats.bytes_identity,
            5u + std::string("too many concurrent requests (--web.max-requests=1)\n").size());
}

// The slow-client defense without a thread per connection: 64 connections holding half a request
// and 64 silent ones, on a server with 2 handler threads, do not delay a scrape.
TEST(HttpServer, HalfSentAndSilentConnectionsHoldNoHandler) {
  auto server = HttpServer::Start(
      HttpOptions{.listen_address = "127.0.0.1:0", .handler_threads = 2}, MetricsRoute());
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = server.value()->ListeningPorts()[0];
  std::vector<int> held;
  for (int i = 0; i < 128; ++i) {
    held.push_back(ConnectLoopback(AF_INET, port));
    ASSERT_GE(held.back(), 0);
    if (i < 64) {
      const std::string half = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
      ::send(held.back(), half.data(), half.size(), MSG_NOSIGNAL);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(GetOver(AF_INET, port), StartsWith("HTTP/1.1 200 "));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  for (int fd : held) ::close(fd);
}

// Past --web.max-connections the oldest connection not in a handler is closed for the new one.
TEST(HttpServer, PastTheConnectionCapTheOldestIdleConnectionGoes) {
  auto server = HttpServer::Start(
      HttpOptions{.listen_address = "127.0.0.1:0", .max_connections = 8}, MetricsRoute());
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = server.value()->ListeningPorts()[0];
  std::vector<int> held;
  for (int i = 0; i < 8; ++i) held.push_back(ConnectLoopback(AF_INET, port));
  EXPECT_THAT(GetOver(AF_INET, port), StartsWith("HTTP/1.1 200 "));
  char byte;
  EXPECT_EQ(::recv(held.front(), &byte, 1, 0), 0) << "the oldest silent connection was closed";
  for (int fd : held) ::close(fd);
}

TEST(HttpServer, ServesOnIpv6Loopback) {
  auto server = HttpServer::Start(HttpOptions{.listen_address = "[::1]:0"}, MetricsRoute());
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = server.value()->ListeningPorts().at(0);
  EXPECT_THAT(GetOver(AF_INET6, port), ::testing::EndsWith("\r\n\r\nup 1\n"));
  EXPECT_EQ(GetOver(AF_INET, port), "") << "[::1] takes no IPv4";
}

TEST(HttpServer, EveryInterfaceServesIpv4AndIpv6) {
  for (const char* address : {":0", "[::]:0"}) {
    auto server = HttpServer::Start(HttpOptions{.listen_address = address}, MetricsRoute());
    ASSERT_TRUE(server.ok()) << address << ": " << server.error().message;
    const int port = server.value()->ListeningPorts().at(0);
    EXPECT_THAT(GetOver(AF_INET, port), StartsWith("HTTP/1.1 200 ")) << address;
    EXPECT_THAT(GetOver(AF_INET6, port), StartsWith("HTTP/1.1 200 ")) << address;
  }
}

TEST(HttpServer, ABadListenAddressIsAnError) {
  auto server = HttpServer::Start(HttpOptions{.listen_address = "host.example:80"}, {});
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.error().message, HasSubstr("--web.listen-address"));
}

TEST(HttpServer, ABusyPortIsAnErrorNotACrash) {
  auto first = HttpServer::Start(HttpOptions{.listen_address = "127.0.0.1:0"}, {});
  ASSERT_TRUE(first.ok());
  const int port = first.value()->ListeningPorts()[0];
  auto second =
      HttpServer::Start(HttpOptions{.listen_address = "127.0.0.1:" + std::to_string(port)}, {});
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.error().message, HasSubstr(std::to_string(port)));
}

}  // namespace
}  // namespace roceqos
