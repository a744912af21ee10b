#pragma once

// The HTTP endpoint: the exporter's own small HTTP/1.1 server, one dispatcher for every path, so
// the exporter decides every answer: /metrics with a correct 0.0.4 Content-Type, /-/healthy,
// /-/ready, 404 for unknown paths, 405 for wrong methods (not prometheus-cpp's Exposer, which
// cannot host extra handlers; not civetweb, which ties one thread to each open connection and is
// built without IPv6 in Debian: docs/decisions.md, "HTTP: our own event loop").
//
// One event-loop thread accepts, reads every request head and writes every answer with
// non-blocking sockets, so a connection costs a descriptor and a buffer, never a thread: a client
// that sends half a request or nothing holds no worker. A complete request goes to a small pool of
// handler threads (renders and gzip run there, off the loop).

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

/// The defense against slow and silent clients is a deadline for the whole request, a bounded
/// head, a cap on open connections that closes the oldest idle one to admit a new one, and a cap
/// on requests handled at once (fast 503). Measured figures in docs/decisions.md.
struct HttpOptions {
  std::string listen_address;     // --web.listen-address syntax (listen_address.h): "127.0.0.1:0"
  int max_connections = 256;      // --web.max-connections: open at once, then the oldest goes
  int handler_threads = 4;        // run the route handlers; a request beyond them waits its turn
  int request_timeout_ms = 2000;  // the whole request (head and body) must arrive within this
  int write_timeout_ms = 30000;   // the whole answer must be taken by the client within this
  int max_requests = 40;          // --web.max-requests: handled at once; beyond it 503 (0: none)
  int max_request_size = 8192;    // request line + headers, and a body; longer: 414/431/413
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
  /// Binds and starts serving. A bind failure (port in use, bad address) is an Error; so is a
  /// thread that cannot be created (errnum EAGAIN: a task limit, see the message).
  /// `counters`, when given, must outlive the server.
  static Result<std::unique_ptr<HttpServer>> Start(const HttpOptions& options,
                                                   std::vector<HttpRoute> routes,
                                                   HttpCounters* counters = nullptr);
  ~HttpServer();  // closes every connection, waits for the handlers running, joins the threads
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// The bound port(s); with port 0 the kernel's choice.
  std::vector<int> ListeningPorts() const;

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace roceqos
