// HTTP request handling (exporter/http/http_server.cc): the input is sent as raw bytes (request
// line, headers, body) to a server on 127.0.0.1 with the exporter's routes (routes.h); the server's
// event loop reads and parses it (request_head.h) and its dispatcher routes it (exact path, method,
// HEAD as GET, 404/405/500); /metrics is the real handler, so the query string goes through the
// collect[] parser. After every input the server must still answer a well-formed request: a bad
// request may be refused, never take the endpoint down.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "exporter/http/http_server.h"
#include "exporter/http/routes.h"

namespace {

roceqos::HttpServer* Server(int* port) {
  static std::unique_ptr<roceqos::HttpServer> server;
  static int bound = 0;
  if (!server) {
    // Before the first sample: build info and serving counters only, a small body.
    static roceqos::ExpositionCache cache([] { return std::shared_ptr<const roceqos::Snapshot>(); },
                                          nullptr);
    // The exporter's own routes, the lifecycle API open so POST /-/reload reaches its handler.
    std::vector<roceqos::HttpRoute> routes = roceqos::Routes(
        roceqos::RouteOptions{.enable_lifecycle = true}, cache,
        [] { return std::shared_ptr<const roceqos::Snapshot>(); },
        []() -> roceqos::Result<void> { return {}; });
    auto started = roceqos::HttpServer::Start(
        {.listen_address = "127.0.0.1:0", .handler_threads = 2, .request_timeout_ms = 200},
        std::move(routes));
    if (!started) __builtin_trap();
    server = std::move(*started);
    bound = server->ListeningPorts().at(0);
  }
  *port = bound;
  return server.get();
}

// The errno of the last Exchange's failed connect or recv (0: none), for the failure message.
int exchange_errno = 0;

// Sends `request`, half-closes, returns the first bytes of the answer ("" if none).
std::string Exchange(int port, const uint8_t* data, size_t size) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  exchange_errno = 0;
  // libFuzzer's -timeout watchdog is a SIGALRM without SA_RESTART: any blocking call here may
  // end in EINTR (a finding that was only the harness) and is resumed.
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (rc != 0 && errno == EINTR) {  // the connect goes on; wait for its outcome
    pollfd writable{fd, POLLOUT, 0};
    while (::poll(&writable, 1, -1) < 0 && errno == EINTR) {
    }
    int error = 0;
    socklen_t len = sizeof error;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
    rc = error == 0 ? 0 : -1;
    errno = error;
  }
  if (rc != 0) {
    exchange_errno = errno;
  } else {
    while (::send(fd, data, size, MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
    ::shutdown(fd, SHUT_WR);
    // A stream socket may hand the answer over in pieces: read up to 64 bytes or the end, not
    // just what the first recv returns.
    char buf[64];
    while (answer.size() < sizeof buf) {
      ssize_t n = ::recv(fd, buf, sizeof buf - answer.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) exchange_errno = errno;
      if (n <= 0) break;
      answer.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return answer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int port = 0;
  Server(&port);
  (void)Exchange(port, data, size);
  static const std::string kProbe = "GET /metrics HTTP/1.0\r\n\r\n";
  std::string answer =
      Exchange(port, reinterpret_cast<const uint8_t*>(kProbe.data()), kProbe.size());
  if (answer.rfind("HTTP/1.1 200", 0) != 0 && answer.rfind("HTTP/1.0 200", 0) != 0) {
    std::fprintf(stderr, "http_fuzz: the probe after this input got %zu bytes: \"", answer.size());
    for (unsigned char c : answer) {
      if (std::isprint(c)) {
        std::fputc(c, stderr);
      } else {
        std::fprintf(stderr, "\\x%02x", c);
      }
    }
    std::fprintf(stderr, "\" (%s)\n", exchange_errno ? std::strerror(exchange_errno) : "no error");
    __builtin_trap();
  }
  return 0;
}
