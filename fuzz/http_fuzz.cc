// HTTP request handling (exporter/app/http_server.cc): the input is sent as raw bytes (request
// line, headers, body) to a server on 127.0.0.1 with the exporter's route shapes; civetweb parses
// it and the project's dispatcher routes it (exact path, method, HEAD as GET, 404/405/500).
// After every input the server must still answer a well-formed request: a bad request may be
// refused, never take the endpoint down.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "exporter/app/http_server.h"

namespace {

roceqos::HttpServer* Server(int* port) {
  static std::unique_ptr<roceqos::HttpServer> server;
  static int bound = 0;
  if (!server) {
    std::vector<roceqos::HttpRoute> routes;
    routes.push_back({"/metrics", {"GET"}, [](const roceqos::HttpRequest&) {
                        return roceqos::HttpResponse{.body = "up 1\n"};
                      }});
    routes.push_back({"/-/reload", {"POST"}, [](const roceqos::HttpRequest&) {
                        return roceqos::HttpResponse{.body = "ok\n"};
                      }});
    auto started = roceqos::HttpServer::Start(
        {.listening_ports = "127.0.0.1:0", .threads = 2, .request_timeout_ms = 200},
        std::move(routes));
    if (!started) __builtin_trap();
    server = std::move(*started);
    bound = server->ListeningPorts().at(0);
  }
  *port = bound;
  return server.get();
}

// Sends `request`, half-closes, returns the first bytes of the answer ("" if none).
std::string Exchange(int port, const uint8_t* data, size_t size) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    (void)::send(fd, data, size, MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    char buf[64];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) answer.assign(buf, static_cast<size_t>(n));
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
    __builtin_trap();
  }
  return 0;
}
