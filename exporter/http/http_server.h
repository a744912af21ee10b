#pragma once

// The HTTP endpoint: civetweb (Debian libcivetweb) with one dispatcher for every path, so the
// exporter decides every answer — /metrics with a correct 0.0.4 Content-Type, /-/healthy,
// /-/ready, 404 for unknown paths, 405 for wrong methods — rather than prometheus-cpp's Exposer,
// which cannot host extra handlers (docs/decisions.md).

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "exporter/render/metrics.h"

struct mg_context;
struct mg_connection;

namespace roceqos {

struct HttpRequest {
  std::string_view method;           // "GET", "POST", ...
  std::string_view path;             // decoded, without the query string
  std::string_view query;            // after '?', still percent-encoded; empty when absent
  std::string_view accept_encoding;  // the Accept-Encoding header, empty when absent
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  /// Instead of `body`: a body owned elsewhere (the exposition cache's), sent without a copy.
  std::shared_ptr<const std::string> shared_body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers

  std::string_view Body() const { return shared_body ? std::string_view(*shared_body) : body; }
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpRoute {
  std::string path;                  // exact match
  std::vector<std::string> methods;  // allowed; HEAD is implied by GET
  HttpHandler handler;
};

/// Whether an Accept-Encoding value (RFC 9110 §12.5.3) makes gzip acceptable: "gzip" or
/// "x-gzip" with q > 0, or "*" with q > 0 when gzip is not listed itself. A q that does not parse
/// makes its coding unacceptable (never guess towards compressing).
bool AcceptsGzip(std::string_view accept_encoding);

/// Civetweb 1.15 serves one connection per worker thread, from the accepted socket to the last
/// byte; a client that sends half a request holds its worker until request_timeout_ms. So the
/// defense is many cheap workers (an idle one is a thread blocked in poll()), a short deadline
/// for the whole request, a bounded head and a cap on concurrent handled requests (fast 503).
/// Measured figures and the alternatives in docs/decisions.md.
struct HttpOptions {
  std::string listening_ports;    // civetweb syntax ("9879", "127.0.0.1:0")
  int threads = 256;              // --web.max-connections: connections served at once
  int request_timeout_ms = 2000;  // the whole request (head and body) must arrive within this
  int max_requests = 40;          // --web.max-requests: handled at once; beyond it 503 (0: none)
  int max_request_size = 8192;    // request line + headers; longer gets 413/431 and a close
};

/// Promhttp-style counters of the server, read lock-free by the /metrics renderer.
class HttpCounters {
 public:
  static constexpr std::array<int, 7> kCodes = {200, 400, 403, 404, 405, 500, 503};
  void Answered(int status, uint64_t body_bytes, bool gzip);
  ServingStats Read() const;  // render_seconds and renders are left 0: the cache fills them
  std::atomic<int64_t> in_flight{0};
  std::atomic<uint64_t> rejected{0};

 private:
  std::array<std::atomic<uint64_t>, kCodes.size() + 1> by_code_{};  // last: any other code
  std::atomic<uint64_t> bytes_identity_{0};
  std::atomic<uint64_t> bytes_gzip_{0};
};

class HttpServer {
 public:
  /// Binds and starts serving. A bind failure (port in use, bad address) is an Error.
  /// `counters`, when given, must outlive the server.
  static Result<std::unique_ptr<HttpServer>> Start(const HttpOptions& options,
                                                   std::vector<HttpRoute> routes,
                                                   HttpCounters* counters = nullptr);
  ~HttpServer();  // stops accepting and joins civetweb's threads
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// The bound port(s); with port 0 the kernel's choice.
  std::vector<int> ListeningPorts() const;

 private:
  HttpServer(std::vector<HttpRoute> routes, int max_requests, HttpCounters* counters)
      : routes_(std::move(routes)), max_requests_(max_requests), counters_(counters) {}
  static int Dispatch(mg_connection* conn, void* self);
  HttpResponse Handle(const HttpRequest& request) const;
  HttpResponse Admit(const HttpRequest& request);

  std::vector<HttpRoute> routes_;
  int max_requests_;
  HttpCounters own_counters_;  // when the caller passes none
  HttpCounters* counters_;
  mg_context* context_ = nullptr;
};

}  // namespace roceqos
