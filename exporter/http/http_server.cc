#include "exporter/http/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "base/log_event.h"
#include "base/thread_name.h"
#include "exporter/http/listen_address.h"
#include "exporter/http/request_head.h"

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
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "";
  }
}

HttpResponse TextResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// The q of one Accept-Encoding element's parameters (";q=0.5"); 1 without one, -1 if malformed.
double QValue(std::string_view params) {
  double q = 1;
  while (!params.empty()) {
    const size_t semi = params.find(';');
    const std::string_view param = TrimOws(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
    if (param.size() < 2 || std::tolower(static_cast<unsigned char>(param[0])) != 'q' ||
        param[1] != '=') {
      continue;  // another parameter: ignored as RFC 9110 allows
    }
    const std::string_view value = TrimOws(param.substr(2));
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
    const std::string_view coding = TrimOws(element.substr(0, semi));
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

namespace {

using Clock = std::chrono::steady_clock;

// A descriptor closed when its owner goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Where a connection is. Only kHandling has no deadline: a handler runs to its end.
enum class Phase {
  kReading,   // the head (and a body) arrives within request_timeout_ms of the accept
  kHandling,  // on a handler thread; the loop does not watch the socket meanwhile
  kWriting,   // the answer goes out within write_timeout_ms
  kDraining,  // answered and shut for writing; what the client still sends is read and dropped
              // briefly, so closing with unread bytes does not reset the answer away (RFC 9112
              // §9.6)
};

struct Connection {
  Fd fd;
  Phase phase = Phase::kReading;
  Clock::time_point deadline;
  std::string in;      // received so far (bounded by the head and body limits)
  size_t scanned = 0;  // the blank line ending the head is searched for from here
  std::optional<RequestHead> head;
  std::string out_head;  // status line and headers, then `out_body`
  std::shared_ptr<const std::string> out_owner;
  std::string_view out_body;
  size_t sent = 0;  // of out_head + out_body
};

struct Job {
  uint64_t id;
  RequestHead head;
};

struct Done {
  uint64_t id;
  std::string head;
  std::shared_ptr<const std::string> owner;  // keeps `body` alive
  std::string_view body;
};

constexpr uint64_t kWakeId = 0;  // the eventfd's epoll key
constexpr uint64_t kFirstListenId = 1;
constexpr uint64_t kFirstConnectionId = 1u << 16;
constexpr auto kDrainTime = std::chrono::milliseconds(500);
// After EMFILE/ENFILE the listening sockets rest this long instead of waking the loop at once.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

Result<Fd> BindOne(int family, const sockaddr* addr, socklen_t len, bool dual_stack, int backlog) {
  Fd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return MakeError(errno, fmt::format("socket: {}", std::strerror(errno)));
  const int one = 1, v6only = dual_stack ? 0 : 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET6) ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
  if (::bind(fd.get(), addr, len) != 0) {
    return MakeError(errno, fmt::format("bind: {}", std::strerror(errno)));
  }
  if (::listen(fd.get(), backlog) != 0) {
    return MakeError(errno, fmt::format("listen: {}", std::strerror(errno)));
  }
  return fd;
}

// The listening socket for `address`; ":port" is a dual-stack IPv6 socket, IPv4 alone where the
// kernel has no IPv6 (booted with ipv6.disable=1: socket() fails with EAFNOSUPPORT).
Result<Fd> Listen(const ListenAddress& address, int backlog) {
  if (address.family == AF_INET) {
    sockaddr_in v4{};
    v4.sin_family = AF_INET;
    v4.sin_port = htons(address.port);
    ::inet_pton(AF_INET, address.host.c_str(), &v4.sin_addr);
    return BindOne(AF_INET, reinterpret_cast<sockaddr*>(&v4), sizeof v4, false, backlog);
  }
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  v6.sin6_port = htons(address.port);
  v6.sin6_addr = in6addr_any;
  if (!address.host.empty()) ::inet_pton(AF_INET6, address.host.c_str(), &v6.sin6_addr);
  Result<Fd> fd =
      BindOne(AF_INET6, reinterpret_cast<sockaddr*>(&v6), sizeof v6, address.dual_stack, backlog);
  if (!fd && address.family == AF_UNSPEC && fd.error().errnum == EAFNOSUPPORT) {
    return Listen(ListenAddress{.family = AF_INET, .host = "0.0.0.0", .port = address.port},
                  backlog);
  }
  return fd;
}

std::string ResponseHead(const HttpResponse& response, size_t body_size) {
  std::string head = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n"
      "Cache-Control: no-store\r\nConnection: close\r\n",
      response.status, StatusText(response.status), response.content_type, body_size);
  for (const auto& [name, value] : response.headers) head += fmt::format("{}: {}\r\n", name, value);
  head += "\r\n";
  return head;
}

}  // namespace

struct HttpServer::Impl {
  HttpOptions options;
  std::vector<HttpRoute> routes;
  HttpCounters own_counters;  // when the caller passes none
  HttpCounters* counters = nullptr;
  std::vector<Fd> listeners;
  Fd epoll;
  Fd wake;  // eventfd: a handler finished, or the server stops
  std::atomic<bool> stopping{false};
  std::map<uint64_t, Connection> connections;
  uint64_t next_id = kFirstConnectionId;
  bool accepting = true;
  Clock::time_point accept_paused_until;

  std::mutex mutex;  // guards jobs, done, jobs_closed
  std::condition_variable job_ready;
  std::deque<Job> jobs;
  std::vector<Done> done;
  bool jobs_closed = false;

  std::thread loop;
  std::vector<std::thread> handlers;

  Result<void> Bind();
  void StartThreads();
  void Stop();
  void RunLoop();
  void HandlerLoop();
  Done Run(const Job& job);
  HttpResponse Handle(const HttpRequest& request) const;

  int NextTimeoutMs() const;
  void Watch(uint64_t id, int fd, uint32_t events, int op);
  void SetAccepting(bool on);
  void AcceptAll(int listener);
  bool MakeRoom();
  void OnReadable(uint64_t id, Connection& c);
  void ReadRequest(uint64_t id, Connection& c);
  void Submit(uint64_t id, Connection& c);
  void Answer(uint64_t id, Connection& c, const HttpResponse& response, bool with_body);
  void StartWriting(uint64_t id, Connection& c);
  void Write(uint64_t id, Connection& c);
  void Drain(uint64_t id, Connection& c);
  void Close(uint64_t id);
  void CollectDone();
  void ExpireDeadlines();
};

Result<void> HttpServer::Impl::Bind() {
  Result<ListenAddress> address = ParseListenAddress(options.listen_address);
  if (!address) return address.error();
  Result<Fd> fd = Listen(*address, options.max_connections);
  if (!fd) {
    return MakeError(fd.error().errnum,
                     fmt::format("cannot listen on {}: {} (port in use or address not local?)",
                                 options.listen_address, fd.error().message));
  }
  listeners.push_back(std::move(*fd));
  epoll = Fd(::epoll_create1(EPOLL_CLOEXEC));
  wake = Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (epoll.get() < 0 || wake.get() < 0) {
    return MakeError(errno, fmt::format("epoll/eventfd: {}", std::strerror(errno)));
  }
  Watch(kWakeId, wake.get(), EPOLLIN, EPOLL_CTL_ADD);
  for (size_t i = 0; i < listeners.size(); ++i) {
    Watch(kFirstListenId + i, listeners[i].get(), EPOLLIN, EPOLL_CTL_ADD);
  }
  return {};
}

// Throws std::system_error when a thread cannot be created; Stop() joins those that started.
void HttpServer::Impl::StartThreads() {
  const int n = std::max(1, options.handler_threads);
  for (int i = 0; i < n; ++i)
    handlers.push_back(NamedThread("roceqos-handler", [this] { HandlerLoop(); }));
  loop = NamedThread("roceqos-http", [this] { RunLoop(); });
}

void HttpServer::Impl::Stop() {
  stopping = true;
  const uint64_t one = 1;
  if (wake.get() >= 0) (void)!::write(wake.get(), &one, sizeof one);
  if (loop.joinable()) loop.join();
  {
    std::lock_guard lock(mutex);
    jobs_closed = true;
  }
  job_ready.notify_all();
  for (std::thread& t : handlers) t.join();
  connections.clear();  // closes their sockets
}

void HttpServer::Impl::Watch(uint64_t id, int fd, uint32_t events, int op) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = id;
  ::epoll_ctl(epoll.get(), op, fd, &event);
}

void HttpServer::Impl::RunLoop() {
  std::array<epoll_event, 64> events{};
  while (!stopping.load()) {
    const int n = ::epoll_wait(epoll.get(), events.data(), events.size(), NextTimeoutMs());
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kWakeId) {
        uint64_t count = 0;
        (void)!::read(wake.get(), &count, sizeof count);
      } else if (id < kFirstConnectionId) {
        AcceptAll(listeners[id - kFirstListenId].get());
      } else if (auto it = connections.find(id); it != connections.end()) {
        OnReadable(id, it->second);
      }
    }
    CollectDone();
    ExpireDeadlines();
  }
}

int HttpServer::Impl::NextTimeoutMs() const {
  std::optional<Clock::time_point> next;
  if (!accepting) next = accept_paused_until;
  for (const auto& [id, c] : connections) {
    if (c.phase != Phase::kHandling && (!next || c.deadline < *next)) next = c.deadline;
  }
  if (!next) return -1;
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(wait, 0, 60'000));
}

void HttpServer::Impl::SetAccepting(bool on) {
  if (on == accepting) return;
  accepting = on;
  for (size_t i = 0; i < listeners.size(); ++i) {
    Watch(kFirstListenId + i, listeners[i].get(), on ? uint32_t{EPOLLIN} : 0u, EPOLL_CTL_MOD);
  }
}

// Accepts what the backlog holds. At --web.max-connections the oldest connection not being
// handled is closed for the new one: a flood of idle connections then costs each of them its
// time, never a scraper its turn.
void HttpServer::Impl::AcceptAll(int listener) {
  for (int i = 0; i < 64; ++i) {
    if (connections.size() >= static_cast<size_t>(options.max_connections) && !MakeRoom()) {
      SetAccepting(false);  // every slot is in a handler; one frees when it answers
      accept_paused_until = Clock::now() + kAcceptPause;
      return;
    }
    Fd fd(::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (fd.get() < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        LogEvent(spdlog::level::warn, "cannot accept a connection",
                 {{"error", std::strerror(errno)}});
        SetAccepting(false);
        accept_paused_until = Clock::now() + kAcceptPause;
      }
      return;  // EAGAIN: the backlog is empty; ECONNABORTED and the like: the client left
    }
    const uint64_t id = next_id++;
    Connection& c = connections[id];
    c.fd = std::move(fd);
    c.deadline = Clock::now() + std::chrono::milliseconds(options.request_timeout_ms);
    Watch(id, c.fd.get(), EPOLLIN, EPOLL_CTL_ADD);
  }
}

// Closes the connection that is furthest along towards its deadline among those not in a
// handler, preferring one already answered, then one still sending its request.
bool HttpServer::Impl::MakeRoom() {
  auto rank = [](Phase p) { return p == Phase::kDraining ? 0 : p == Phase::kReading ? 1 : 2; };
  auto victim = connections.end();
  for (auto it = connections.begin(); it != connections.end(); ++it) {
    if (it->second.phase == Phase::kHandling) continue;
    if (victim == connections.end() ||
        std::pair(rank(it->second.phase), it->second.deadline) <
            std::pair(rank(victim->second.phase), victim->second.deadline)) {
      victim = it;
    }
  }
  if (victim == connections.end()) return false;
  connections.erase(victim);
  return true;
}

void HttpServer::Impl::OnReadable(uint64_t id, Connection& c) {
  switch (c.phase) {
    case Phase::kReading:
      return ReadRequest(id, c);
    case Phase::kWriting:
      return Write(id, c);
    case Phase::kDraining:
      return Drain(id, c);
    case Phase::kHandling:
      return;
  }
}

void HttpServer::Impl::ReadRequest(uint64_t id, Connection& c) {
  const size_t limit = static_cast<size_t>(options.max_request_size) * 2 + 1;  // head + body
  char buf[4096];
  const ssize_t n = ::recv(c.fd.get(), buf, std::min(sizeof buf, limit - c.in.size()), 0);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return Close(id);
  if (n < 0) return;
  c.in.append(buf, static_cast<size_t>(n));
  if (!c.head) {
    // Parse only once the head can be complete (or too long), so a client trickling bytes costs
    // one scan of what it sent, not one per byte.
    const size_t from = c.scanned >= 3 ? c.scanned - 3 : 0;
    const bool ended = c.in.find("\n\r\n", from) != std::string::npos ||
                       c.in.find("\n\n", from) != std::string::npos;
    c.scanned = c.in.size();
    const auto max = static_cast<size_t>(options.max_request_size);
    if (!ended && c.in.size() <= max) return;
    HeadParse parsed = ParseRequestHead(c.in, max, max);
    if (parsed.kind == HeadParse::Kind::kRefused) {
      return Answer(id, c, TextResponse(parsed.status, parsed.why + "\n"), true);
    }
    if (parsed.kind == HeadParse::Kind::kIncomplete) return;
    c.head = std::move(parsed.head);
  }
  if (c.in.size() >= c.head->head_bytes + c.head->content_length) Submit(id, c);
}

// The --web.max-requests cap, as node_exporter's: beyond it a 503 at once instead of queueing
// work behind renders already running.
void HttpServer::Impl::Submit(uint64_t id, Connection& c) {
  const int64_t in_flight = counters->in_flight.load();
  if (options.max_requests > 0 && in_flight >= options.max_requests) {
    counters->rejected.fetch_add(1, std::memory_order_relaxed);
    const HttpResponse busy =
        TextResponse(503, fmt::format("too many concurrent requests (--web.max-requests={})\n",
                                      options.max_requests));
    return Answer(id, c, busy, c.head->method != "HEAD");
  }
  counters->in_flight.fetch_add(1);
  c.phase = Phase::kHandling;
  ::epoll_ctl(epoll.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
  {
    std::lock_guard lock(mutex);
    jobs.push_back(Job{id, std::move(*c.head)});
  }
  c.in.clear();
  c.in.shrink_to_fit();
  job_ready.notify_one();
}

// An answer the loop writes itself (a refused request, the 503 of the cap).
void HttpServer::Impl::Answer(uint64_t id, Connection& c, const HttpResponse& response,
                              bool with_body) {
  const std::string_view body = with_body ? response.Body() : std::string_view{};
  counters->Answered(response.status, body.size(), false);
  c.out_head = ResponseHead(response, response.Body().size());
  c.out_head += body;
  c.out_body = {};
  StartWriting(id, c);
}

void HttpServer::Impl::StartWriting(uint64_t id, Connection& c) {
  const bool watched = c.phase != Phase::kHandling;
  c.phase = Phase::kWriting;
  c.sent = 0;
  c.deadline = Clock::now() + std::chrono::milliseconds(options.write_timeout_ms);
  Watch(id, c.fd.get(), EPOLLOUT, watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD);
  Write(id, c);
}

void HttpServer::Impl::Write(uint64_t id, Connection& c) {
  const size_t total = c.out_head.size() + c.out_body.size();
  while (c.sent < total) {
    iovec parts[2];
    int count = 0;
    if (c.sent < c.out_head.size()) {
      parts[count++] = {c.out_head.data() + c.sent, c.out_head.size() - c.sent};
    }
    const size_t body_from = c.sent > c.out_head.size() ? c.sent - c.out_head.size() : 0;
    if (body_from < c.out_body.size()) {
      parts[count++] = {const_cast<char*>(c.out_body.data()) + body_from,
                        c.out_body.size() - body_from};
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = static_cast<size_t>(count);
    const ssize_t n = ::sendmsg(c.fd.get(), &message, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;  // EPOLLOUT says when it can go on
    if (n < 0) return Close(id);
    c.sent += static_cast<size_t>(n);
  }
  c.out_head.clear();
  c.out_owner.reset();
  c.out_body = {};
  ::shutdown(c.fd.get(), SHUT_WR);
  c.phase = Phase::kDraining;
  c.deadline = Clock::now() + kDrainTime;
  Watch(id, c.fd.get(), EPOLLIN, EPOLL_CTL_MOD);
}

void HttpServer::Impl::Drain(uint64_t id, Connection& c) {
  char buf[4096];
  const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) Close(id);
}

void HttpServer::Impl::Close(uint64_t id) { connections.erase(id); }

void HttpServer::Impl::CollectDone() {
  std::vector<Done> finished;
  {
    std::lock_guard lock(mutex);
    finished.swap(done);
  }
  for (Done& d : finished) {
    auto it = connections.find(d.id);
    if (it == connections.end()) continue;
    Connection& c = it->second;
    c.out_head = std::move(d.head);
    c.out_owner = std::move(d.owner);
    c.out_body = d.body;
    StartWriting(d.id, c);
  }
  if (!accepting && connections.size() < static_cast<size_t>(options.max_connections) &&
      Clock::now() >= accept_paused_until) {
    SetAccepting(true);
  }
}

void HttpServer::Impl::ExpireDeadlines() {
  const Clock::time_point now = Clock::now();
  for (auto it = connections.begin(); it != connections.end();) {
    const Connection& c = it->second;
    it = c.phase != Phase::kHandling && c.deadline <= now ? connections.erase(it) : std::next(it);
  }
  if (!accepting && now >= accept_paused_until) SetAccepting(true);
}

void HttpServer::Impl::HandlerLoop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex);
      job_ready.wait(lock, [this] { return jobs_closed || !jobs.empty(); });
      if (jobs.empty()) return;
      job = std::move(jobs.front());
      jobs.pop_front();
    }
    Done finished = Run(job);
    counters->in_flight.fetch_sub(1);
    {
      std::lock_guard lock(mutex);
      done.push_back(std::move(finished));
    }
    const uint64_t one = 1;
    (void)!::write(wake.get(), &one, sizeof one);
  }
}

Done HttpServer::Impl::Run(const Job& job) {
  const RequestHead& head = job.head;
  const HttpRequest request{head.method, head.path, head.query, head.accept_encoding};
  HttpResponse response;
  try {
    response = Handle(request);
  } catch (const std::exception& e) {
    // Thread boundary (a handler thread): a failing handler is a 500, never a crash.
    LogEvent(spdlog::level::err, "HTTP handler failed",
             {{"method", request.method}, {"path", request.path}, {"error", e.what()}});
    response = TextResponse(500, "500 internal server error\n");
  }
  const bool with_body = request.method != "HEAD";
  const bool gzip = std::any_of(response.headers.begin(), response.headers.end(), [](auto& h) {
    return h.first == "Content-Encoding" && h.second == "gzip";
  });
  Done d{job.id, ResponseHead(response, response.Body().size()), nullptr, {}};
  if (with_body) {
    // The body stays where it is (the exposition cache's shared text) until it is sent.
    d.owner = response.shared_body ? response.shared_body
                                   : std::make_shared<const std::string>(std::move(response.body));
    d.body = *d.owner;
  }
  counters->Answered(response.status, d.body.size(), gzip);
  return d;
}

HttpResponse HttpServer::Impl::Handle(const HttpRequest& request) const {
  auto route = std::find_if(routes.begin(), routes.end(),
                            [&](const HttpRoute& r) { return r.path == request.path; });
  if (route == routes.end()) return TextResponse(404, "404 page not found\n");
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
  return route->handler(request);
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options,
                                                      std::vector<HttpRoute> routes,
                                                      HttpCounters* counters) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->routes = std::move(routes);
  impl->counters = counters != nullptr ? counters : &impl->own_counters;
  if (Result<void> bound = impl->Bind(); !bound) return bound.error();
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(impl)));
  try {
    server->impl_->StartThreads();
  } catch (const std::system_error& e) {
    // `server` goes out of scope: its destructor joins the threads that did start.
    return MakeError(e.code().value(), fmt::format("the HTTP server's threads: {}", e.what()));
  }
  return server;
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { impl_->Stop(); }

std::vector<int> HttpServer::ListeningPorts() const {
  std::vector<int> ports;
  for (const Fd& fd : impl_->listeners) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    ports.push_back(addr.ss_family == AF_INET6
                        ? ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port)
                        : ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port));
  }
  return ports;
}

}  // namespace roceqos
