#include "exporter/app/http_server.h"

#include <civetweb.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <mutex>

namespace roceqos {
namespace {

std::string_view StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "";
  }
}

int LogCivetMessage(const mg_connection* /*conn*/, const char* message) {
  spdlog::debug("http: {}", message);
  return 1;  // handled: civetweb prints nothing itself
}

HttpResponse TextResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options,
                                                      std::vector<HttpRoute> routes) {
  static std::once_flag init_once;
  std::call_once(init_once, [] { mg_init_library(0); });

  std::unique_ptr<HttpServer> server(new HttpServer(std::move(routes)));
  const std::string threads = std::to_string(options.threads);
  const std::string timeout = std::to_string(options.request_timeout_ms);
  const char* civet_options[] = {
      "listening_ports",
      options.listening_ports.c_str(),
      "num_threads",
      threads.c_str(),
      "request_timeout_ms",
      timeout.c_str(),
      // One request per connection: a worker thread is never parked on an idle scraper.
      "enable_keep_alive",
      "no",
      nullptr,
  };
  mg_callbacks callbacks{};
  callbacks.log_message = LogCivetMessage;
  char error_text[256] = {};
  unsigned error_code = 0;
  mg_error_data error{&error_code, error_text, sizeof(error_text)};
  mg_init_data init{&callbacks, server.get(), civet_options};
  server->context_ = mg_start2(&init, &error);
  if (server->context_ == nullptr) {
    return MakeError(EADDRNOTAVAIL,
                     fmt::format("cannot listen on {}: {} (port in use or address not local?)",
                                 options.listening_ports,
                                 error_text[0] ? error_text : "civetweb failed to start"));
  }
  // One catch-all handler: civetweb matches "/" as a prefix of every URI.
  mg_set_request_handler(server->context_, "/", &HttpServer::Dispatch, server.get());
  return server;
}

HttpServer::~HttpServer() {
  if (context_ != nullptr) mg_stop(context_);
}

std::vector<int> HttpServer::ListeningPorts() const {
  mg_server_port ports[8] = {};
  const int n = mg_get_server_ports(context_, 8, ports);
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(ports[i].port);
  return out;
}

HttpResponse HttpServer::Handle(const HttpRequest& request) const {
  auto route = std::find_if(routes_.begin(), routes_.end(),
                            [&](const HttpRoute& r) { return r.path == request.path; });
  if (route == routes_.end()) return TextResponse(404, "404 page not found\n");
  const std::string_view method = request.method == "HEAD" ? "GET" : request.method;
  if (std::find(route->methods.begin(), route->methods.end(), method) == route->methods.end()) {
    HttpResponse r = TextResponse(405, "405 method not allowed\n");
    std::string allow;
    for (const std::string& m : route->methods) {
      allow += (allow.empty() ? "" : ", ") + m;
      if (m == "GET") allow += ", HEAD";
    }
    r.headers.emplace_back("Allow", allow);
    return r;
  }
  try {
    return route->handler(request);
  } catch (const std::exception& e) {
    // Thread boundary (civetweb worker): a failing handler is a 500, never a crash.
    spdlog::error("http {} {}: {}", request.method, request.path, e.what());
    return TextResponse(500, "500 internal server error\n");
  }
}

int HttpServer::Dispatch(mg_connection* conn, void* self) {
  const mg_request_info* info = mg_get_request_info(conn);
  const HttpServer* server = static_cast<const HttpServer*>(self);
  HttpRequest request{info->request_method ? info->request_method : "",
                      info->local_uri ? info->local_uri : ""};
  HttpResponse response;
  try {
    response = server->Handle(request);
  } catch (const std::exception& e) {
    spdlog::error("http {} {}: {}", request.method, request.path, e.what());
    response = TextResponse(500, "500 internal server error\n");
  }
  std::string head = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n"
      "Cache-Control: no-store\r\nConnection: close\r\n",
      response.status, StatusText(response.status), response.content_type, response.body.size());
  for (const auto& [name, value] : response.headers) head += fmt::format("{}: {}\r\n", name, value);
  head += "\r\n";
  mg_write(conn, head.data(), head.size());
  if (request.method != "HEAD" && !response.body.empty()) {
    mg_write(conn, response.body.data(), response.body.size());
  }
  return response.status;
}

}  // namespace roceqos
