#pragma once

// The HTTP endpoint: civetweb (Debian libcivetweb) with one dispatcher for every path, so the
// exporter decides every answer — /metrics with a correct 0.0.4 Content-Type, /-/healthy,
// /-/ready, 404 for unknown paths, 405 for wrong methods — rather than prometheus-cpp's Exposer,
// which cannot host extra handlers (docs/decisions.md).

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/result.h"

struct mg_context;
struct mg_connection;

namespace roceqos {

struct HttpRequest {
  std::string_view method;  // "GET", "POST", ...
  std::string_view path;    // decoded, without the query string
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpRoute {
  std::string path;                  // exact match
  std::vector<std::string> methods;  // allowed; HEAD is implied by GET
  HttpHandler handler;
};

struct HttpOptions {
  std::string listening_ports;  // civetweb syntax ("9879", "127.0.0.1:0")
  int threads = 4;
  int request_timeout_ms = 10000;
};

class HttpServer {
 public:
  /// Binds and starts serving. A bind failure (port in use, bad address) is an Error.
  static Result<std::unique_ptr<HttpServer>> Start(const HttpOptions& options,
                                                   std::vector<HttpRoute> routes);
  ~HttpServer();  // stops accepting and joins civetweb's threads
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// The bound port(s); with port 0 the kernel's choice.
  std::vector<int> ListeningPorts() const;

 private:
  explicit HttpServer(std::vector<HttpRoute> routes) : routes_(std::move(routes)) {}
  static int Dispatch(mg_connection* conn, void* self);
  HttpResponse Handle(const HttpRequest& request) const;

  std::vector<HttpRoute> routes_;
  mg_context* context_ = nullptr;
};

}  // namespace roceqos
