// watchdog_harness: plays systemd's side of Type=notify with WatchdogSec= for one process, in an
// environment without systemd (the testbed guest). Used by the testbed scenario
// remediation-watchdog (docs/remediation.md, guard 3).
//
//   watchdog_harness --watchdog-usec=N --status=FILE -- EXE [ARGS...]
//
// Binds a unix datagram socket, starts EXE with NOTIFY_SOCKET and WATCHDOG_USEC=N (as systemd does
// for WatchdogSec=), and from READY=1 on enforces the watchdog the way systemd does: no
// WATCHDOG=1 for N microseconds and the process gets SIGABRT (systemd's default WatchdogSignal=).
// FILE is rewritten atomically after every message: "ready 0|1", "keepalives K", "max_gap_ms M"
// (the longest time between READY=1/WATCHDOG=1 and the next WATCHDOG=1), "timeouts T",
// "stopping 0|1". SIGTERM to the harness is passed on to EXE; the harness then waits for EXE and
// exits 0 only if EXE exited 0 and the watchdog never fired.

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;
using std::chrono::milliseconds;

volatile sig_atomic_t g_term = 0;
void OnTerm(int) { g_term = 1; }

struct Options {
  microseconds watchdog{0};
  std::string status;
  std::vector<char*> command;  // EXE ARGS..., null-terminated
};

struct State {
  bool ready = false;
  bool stopping = false;
  long keepalives = 0;
  long timeouts = 0;
  milliseconds max_gap{0};
  std::optional<Clock::time_point> last;  // READY=1 or the last WATCHDOG=1
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "watchdog_harness: %s\n", what.c_str());
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    std::string_view a = argv[i];
    if (a.starts_with("--watchdog-usec=")) {
      o.watchdog = microseconds(std::strtoll(argv[i] + 16, nullptr, 10));
    } else if (a.starts_with("--status=")) {
      o.status = std::string(a.substr(9));
    } else {
      Die("usage: watchdog_harness --watchdog-usec=N --status=FILE -- EXE [ARGS...]");
    }
  }
  if (o.watchdog.count() <= 0 || o.status.empty() || i + 1 >= argc) {
    Die("usage: watchdog_harness --watchdog-usec=N --status=FILE -- EXE [ARGS...]");
  }
  o.command.assign(argv + i + 1, argv + argc);
  o.command.push_back(nullptr);
  return o;
}

void WriteStatus(const std::string& path, const State& s) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "ready " << s.ready << "\nkeepalives " << s.keepalives << "\nmax_gap_ms "
        << s.max_gap.count() << "\ntimeouts " << s.timeouts << "\nstopping " << s.stopping << "\n";
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) Die("rename " + tmp + ": " + strerror(errno));
}

int BindNotifySocket(std::string& path) {
  char dir[] = "/tmp/watchdog_harness.XXXXXX";
  if (mkdtemp(dir) == nullptr) Die(std::string("mkdtemp: ") + strerror(errno));
  path = std::string(dir) + "/notify";
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Die(std::string("socket(AF_UNIX): ") + strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Die("bind " + path + ": " + strerror(errno));
  }
  return fd;
}

pid_t Spawn(const Options& o, const std::string& socket_path) {
  const pid_t pid = fork();
  if (pid < 0) Die(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    setenv("NOTIFY_SOCKET", socket_path.c_str(), 1);
    setenv("WATCHDOG_USEC", std::to_string(o.watchdog.count()).c_str(), 1);
    unsetenv("WATCHDOG_PID");
    execv(o.command[0], o.command.data());
    std::fprintf(stderr, "watchdog_harness: exec %s: %s\n", o.command[0], strerror(errno));
    _exit(127);
  }
  return pid;
}

// One datagram may carry several newline-separated assignments (sd_notify(3)).
void OnMessage(std::string_view msg, Clock::time_point now, State& s) {
  while (!msg.empty()) {
    const size_t nl = msg.find('\n');
    const std::string_view line = msg.substr(0, nl);
    msg = nl == std::string_view::npos ? std::string_view() : msg.substr(nl + 1);
    if (line == "READY=1" && !s.ready) {
      s.ready = true;
      s.last = now;
    } else if (line == "WATCHDOG=1" && s.last) {
      ++s.keepalives;
      s.max_gap = std::max(s.max_gap, std::chrono::duration_cast<milliseconds>(now - *s.last));
      s.last = now;
    } else if (line == "STOPPING=1") {
      s.stopping = true;
    }
  }
}

// Returns EXE's exit status (128+signal when killed).
int Supervise(const Options& o, int fd, pid_t pid) {
  State s;
  WriteStatus(o.status, s);
  bool term_sent = false;
  for (;;) {
    if (g_term && !term_sent) {
      kill(pid, SIGTERM);
      term_sent = true;
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      WriteStatus(o.status, s);
      const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return s.timeouts == 0 ? rc : (rc == 0 ? 1 : rc);
    }
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 20);
    const Clock::time_point now = Clock::now();
    if (p.revents & POLLIN) {
      char buf[4096];
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n > 0) OnMessage(std::string_view(buf, static_cast<size_t>(n)), now, s);
      WriteStatus(o.status, s);
    }
    if (s.last && !s.stopping && now - *s.last > o.watchdog) {
      // What systemd does when the watchdog expires (WatchdogSignal=SIGABRT).
      ++s.timeouts;
      s.last.reset();
      WriteStatus(o.status, s);
      kill(pid, SIGABRT);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseArgs(argc, argv);
  struct sigaction sa {};
  sa.sa_handler = OnTerm;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::string socket_path;
  const int fd = BindNotifySocket(socket_path);
  const pid_t pid = Spawn(options, socket_path);
  const int rc = Supervise(options, fd, pid);
  unlink(socket_path.c_str());
  rmdir(socket_path.substr(0, socket_path.rfind('/')).c_str());
  return rc;
}
