#include "exporter/http/http_server.h"

#include <civetweb.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <exception>
#include <mutex>
#include <optional>

#include "base/log_event.h"

namespace roceqos {
namespace {

std::string_view StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
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
  LogEvent(spdlog::level::debug, "civetweb message", {{"message", message}});
  return 1;  // handled: civetweb prints nothing itself
}

HttpResponse TextResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The q of one Accept-Encoding element's parameters (";q=0.5"); 1 without one, -1 if malformed.
double QValue(std::string_view params) {
  double q = 1;
  while (!params.empty()) {
    const size_t semi = params.find(';');
    const std::string_view param = Trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
    if (param.size() < 2 || std::tolower(static_cast<unsigned char>(param[0])) != 'q' ||
        param[1] != '=') {
      continue;  // another parameter: ignored as RFC 9110 allows
    }
    const std::string_view value = Trim(param.substr(2));
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), q);
    if (ec != std::errc() || end != value.data() + value.size() || q < 0 || q > 1) return -1;
  }
  return q;
}

}  // namespace

bool AcceptsGzip(std::string_view accept_encoding) {
  std::optional<double> gzip_q, star_q;
  while (!accept_encoding.empty()) {
    const size_t comma = accept_encoding.find(',');
    const std::string_view element = accept_encoding.substr(0, comma);
    accept_encoding =
        comma == std::string_view::npos ? std::string_view{} : accept_encoding.substr(comma + 1);
    const size_t semi = element.find(';');
    const std::string_view coding = Trim(element.substr(0, semi));
    const double q = semi == std::string_view::npos ? 1 : QValue(element.substr(semi + 1));
    if (EqualsNoCase(coding, "gzip") || EqualsNoCase(coding, "x-gzip")) {
      gzip_q = std::max(gzip_q.value_or(-1), q);
    } else if (coding == "*") {
      star_q = q;
    }
  }
  if (gzip_q) return *gzip_q > 0;
  return star_q.value_or(0) > 0;
}

void HttpCounters::Answered(int status, uint64_t body_bytes, bool gzip) {
  const auto known = std::find(kCodes.begin(), kCodes.end(), status);
  by_code_[static_cast<size_t>(known - kCodes.begin())].fetch_add(1, std::memory_order_relaxed);
  (gzip ? bytes_gzip_ : bytes_identity_).fetch_add(body_bytes, std::memory_order_relaxed);
}

ServingStats HttpCounters::Read() const {
  ServingStats stats;
  for (size_t i = 0; i < kCodes.size(); ++i) {
    stats.requests_by_code.emplace_back(std::to_string(kCodes[i]),
                                        by_code_[i].load(std::memory_order_relaxed));
  }
  stats.requests_by_code.emplace_back("other", by_code_.back().load(std::memory_order_relaxed));
  stats.in_flight = in_flight.load(std::memory_order_relaxed);
  stats.rejected = rejected.load(std::memory_order_relaxed);
  stats.bytes_identity = bytes_identity_.load(std::memory_order_relaxed);
  stats.bytes_gzip = bytes_gzip_.load(std::memory_order_relaxed);
  return stats;
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options,
                                                      std::vector<HttpRoute> routes,
                                                      HttpCounters* counters) {
  static std::once_flag init_once;
  std::call_once(init_once, [] { mg_init_library(0); });

  std::unique_ptr<HttpServer> server(
      new HttpServer(std::move(routes), options.max_requests, counters));
  if (server->counters_ == nullptr) server->counters_ = &server->own_counters_;
  const std::string threads = std::to_string(options.threads);
  const std::string timeout = std::to_string(options.request_timeout_ms);
  const std::string head_size = std::to_string(options.max_request_size);
  const char* civet_options[] = {
      "listening_ports",
      options.listening_ports.c_str(),
      "num_threads",
      threads.c_str(),
      // Civetweb 1.15 has one timeout for reading the head and the body, a total deadline (not
      // per read): a client trickling a byte a second is cut at it too.
      "request_timeout_ms",
      timeout.c_str(),
      // The buffer for request line + headers; civetweb answers a longer head with an error and
      // closes.
      "max_request_size",
      head_size.c_str(),
      // Connections accepted but not yet taken by a worker; the kernel backlog holds the rest.
      "connection_queue",
      threads.c_str(),
      "listen_backlog",
      threads.c_str(),
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
  // Without an authorization handler civetweb looks for a .htpasswd file on every request (a
  // stat per scrape, and a file that would start demanding passwords if someone created it);
  // the exporter authenticates nobody (TLS and auth belong to a proxy, docs/deployment.md).
  mg_set_auth_handler(
      server->context_, "/", [](mg_connection*, void*) { return 1; }, nullptr);
  return server;
}

HttpServer::~HttpServer() {
  if (context_ != nullptr) mg_stop(context_);
}

std::vector<int> HttpServer::ListeningPorts() const {
  mg_server_port ports[8] = {};
  const int n = mg_get_server_ports(context_, 8, ports);
  std::vector<int> out;
  out.reserve(n > 0 ? n : 0);
  for (int i = 0; i < n; ++i) out.push_back(ports[i].port);
  return out;
}

// The --web.max-requests cap, as node_exporter's: beyond it a 503 at once instead of queueing
// work behind renders already running.
HttpResponse HttpServer::Admit(const HttpRequest& request) {
  const int64_t in_flight = counters_->in_flight.fetch_add(1) + 1;
  HttpResponse response;
  if (max_requests_ > 0 && in_flight > max_requests_) {
    counters_->rejected.fetch_add(1, std::memory_order_relaxed);
    response = TextResponse(
        503, fmt::format("too many concurrent requests (--web.max-requests={})\n", max_requests_));
  } else {
    try {
      response = Handle(request);
    } catch (const std::exception& e) {
      LogEvent(spdlog::level::err, "HTTP handler failed",
               {{"method", request.method}, {"path", request.path}, {"error", e.what()}});
      response = TextResponse(500, "500 internal server error\n");
    }
  }
  counters_->in_flight.fetch_sub(1);
  return response;
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
    LogEvent(spdlog::level::err, "HTTP handler failed",
             {{"method", request.method}, {"path", request.path}, {"error", e.what()}});
    return TextResponse(500, "500 internal server error\n");
  }
}

int HttpServer::Dispatch(mg_connection* conn, void* self) {
  const mg_request_info* info = mg_get_request_info(conn);
  HttpServer* server = static_cast<HttpServer*>(self);
  const char* accept_encoding = mg_get_header(conn, "Accept-Encoding");
  HttpRequest request{
      info->request_method ? info->request_method : "", info->local_uri ? info->local_uri : "",
      info->query_string ? info->query_string : "", accept_encoding ? accept_encoding : ""};
  const HttpResponse response = server->Admit(request);
  const std::string_view body = response.Body();
  std::string head = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n"
      "Cache-Control: no-store\r\nConnection: close\r\n",
      response.status, StatusText(response.status), response.content_type, body.size());
  for (const auto& [name, value] : response.headers) head += fmt::format("{}: {}\r\n", name, value);
  head += "\r\n";
  const bool with_body = request.method != "HEAD" && !body.empty();
  // One send for head and body when the body is small enough to copy (every gzip body is): on
  // loopback each send is a trip through the TCP stack and a wakeup of the client.
  constexpr size_t kCopyBelow = size_t{256} * 1024;
  if (with_body && body.size() < kCopyBelow) {
    head += body;
    mg_write(conn, head.data(), head.size());
  } else {
    mg_write(conn, head.data(), head.size());
    if (with_body) mg_write(conn, body.data(), body.size());
  }
  const bool gzip = std::any_of(response.headers.begin(), response.headers.end(), [](auto& h) {
    return h.first == "Content-Encoding" && h.second == "gzip";
  });
  server->counters_->Answered(response.status, with_body ? body.size() : 0, gzip);
  return response.status;
}

}  // namespace roceqos
