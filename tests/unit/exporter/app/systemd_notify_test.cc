#include "exporter/app/systemd_notify.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

namespace roceqos {
namespace {

using namespace std::chrono_literals;

// A service manager's end of the notification socket: a unix datagram socket bound in a fresh
// temporary directory (or in the abstract namespace), as systemd binds /run/systemd/notify.
class FakeServiceManager {
 public:
  explicit FakeServiceManager(bool abstract = false) {
    char tmpl[] = "/tmp/roceqos-notify-XXXXXX";
    dir_ = mkdtemp(tmpl);
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    socklen_t len;
    if (abstract) {
      // Abstract names start with NUL; NOTIFY_SOCKET spells the NUL as '@'.
      name_ = "@" + std::filesystem::path(dir_).filename().string();
      std::memcpy(addr.sun_path + 1, name_.data() + 1, name_.size() - 1);
      len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name_.size());
    } else {
      name_ = dir_ + "/notify";
      std::memcpy(addr.sun_path, name_.c_str(), name_.size() + 1);
      len = sizeof(addr);
    }
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0;
  }
  ~FakeServiceManager() {
    close(fd_);
    std::filesystem::remove_all(dir_);
  }

  bool bound() const { return bound_; }
  const std::string& name() const { return name_; }

  // Waits up to `deadline` for one datagram.
  std::optional<std::string> Receive(std::chrono::milliseconds deadline = 2000ms) {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(deadline.count())) != 1) return std::nullopt;
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
  }

  // Non-blocking: was anything sent that has not been received yet? sd_notify's sendmsg has
  // completed before it returns, so a datagram sent earlier is already queued here.
  bool Pending() {
    pollfd pfd{fd_, POLLIN, 0};
    return poll(&pfd, 1, 0) == 1;
  }

 private:
  std::string dir_;
  std::string name_;
  int fd_ = -1;
  bool bound_ = false;
};

// Sets or clears the sd_notify environment for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A clock the test moves by hand so the watchdog rate limit is checked without sleeping.
struct ManualClock {
  std::chrono::steady_clock::time_point now{std::chrono::seconds(1000)};
  SystemdNotifier::Clock fn() {
    return [this] { return now; };
  }
};

TEST(SystemdNotifier, DoesNothingWithoutNotifySocket) {
  FakeServiceManager manager;
  ASSERT_TRUE(manager.bound());
  ScopedEnv socket("NOTIFY_SOCKET", nullptr);
  ScopedEnv usec("WATCHDOG_USEC", "1000000");
  SystemdNotifier notifier;
  EXPECT_FALSE(notifier.active());
  EXPECT_EQ(notifier.watchdog_timeout(), 0us);
  EXPECT_TRUE(notifier.SnapshotPublished().ok());
  EXPECT_TRUE(notifier.SnapshotPublished().ok());
  EXPECT_TRUE(notifier.Stopping().ok());
  EXPECT_FALSE(manager.Pending());
}

TEST(SystemdNotifier, SendsReadyOnFirstSnapshotOnly) {
  FakeServiceManager manager;
  ASSERT_TRUE(manager.bound());
  ScopedEnv socket("NOTIFY_SOCKET", manager.name().c_str());
  ScopedEnv usec("WATCHDOG_USEC", nullptr);
  SystemdNotifier notifier;
  EXPECT_TRUE(notifier.active());
  EXPECT_EQ(notifier.watchdog_timeout(), 0us);

  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  const auto ready = manager.Receive();
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->rfind("READY=1\n", 0), 0u) << *ready;
  EXPECT_NE(ready->find("STATUS="), std::string::npos) << *ready;

  // No watchdog configured: later snapshots send nothing.
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  EXPECT_FALSE(manager.Pending());
}

TEST(SystemdNotifier, PetsTheWatchdogAtAQuarterOfItsTimeout) {
  FakeServiceManager manager;
  ASSERT_TRUE(manager.bound());
  ScopedEnv socket("NOTIFY_SOCKET", manager.name().c_str());
  ScopedEnv usec("WATCHDOG_USEC", "2000000");  // WatchdogSec=2s
  ScopedEnv pid("WATCHDOG_PID", std::to_string(getpid()).c_str());
  ManualClock clock;
  SystemdNotifier notifier(clock.fn());
  EXPECT_EQ(notifier.watchdog_timeout(), 2s);

  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  ASSERT_EQ(manager.Receive()->rfind("READY=1", 0), 0u);

  // Samples every 250 ms: nothing until 500 ms (timeout / 4) have passed since the last message.
  clock.now += 250ms;
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  EXPECT_FALSE(manager.Pending());
  clock.now += 250ms;
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  EXPECT_EQ(manager.Receive(), "WATCHDOG=1");
  clock.now += 499ms;
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  EXPECT_FALSE(manager.Pending());
  clock.now += 1ms;
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  EXPECT_EQ(manager.Receive(), "WATCHDOG=1");
}

TEST(SystemdNotifier, IgnoresAWatchdogMeantForAnotherProcess) {
  FakeServiceManager manager;
  ASSERT_TRUE(manager.bound());
  ScopedEnv socket("NOTIFY_SOCKET", manager.name().c_str());
  ScopedEnv usec("WATCHDOG_USEC", "2000000");
  ScopedEnv pid("WATCHDOG_PID", std::to_string(getpid() + 1).c_str());
  ManualClock clock;
  SystemdNotifier notifier(clock.fn());
  EXPECT_EQ(notifier.watchdog_timeout(), 0us);
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  ASSERT_TRUE(manager.Receive().has_value());
  clock.now += 10s;
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  EXPECT_FALSE(manager.Pending());
}

TEST(SystemdNotifier, SendsStoppingOnceAndNoWatchdogAfterIt) {
  FakeServiceManager manager(/*abstract=*/true);
  ASSERT_TRUE(manager.bound());
  ScopedEnv socket("NOTIFY_SOCKET", manager.name().c_str());
  ScopedEnv usec("WATCHDOG_USEC", "1000000");
  ScopedEnv pid("WATCHDOG_PID", nullptr);
  ManualClock clock;
  SystemdNotifier notifier(clock.fn());
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  ASSERT_EQ(manager.Receive()->rfind("READY=1", 0), 0u);

  ASSERT_TRUE(notifier.Stopping().ok());
  const auto stopping = manager.Receive();
  ASSERT_TRUE(stopping.has_value());
  EXPECT_EQ(stopping->rfind("STOPPING=1\n", 0), 0u) << *stopping;

  clock.now += 10s;
  ASSERT_TRUE(notifier.SnapshotPublished().ok());
  ASSERT_TRUE(notifier.Stopping().ok());
  EXPECT_FALSE(manager.Pending());
}

TEST(SystemdNotifier, ReportsAnUnreachableSocketWithItsPath) {
  ScopedEnv socket("NOTIFY_SOCKET", "/nonexistent/roceqos/notify");
  ScopedEnv usec("WATCHDOG_USEC", nullptr);
  SystemdNotifier notifier;
  ASSERT_TRUE(notifier.active());
  const auto result = notifier.SnapshotPublished();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().errnum, ENOENT);
  EXPECT_NE(result.error().message.find("READY=1"), std::string::npos) << result.error().message;
  EXPECT_NE(result.error().message.find("/nonexistent/roceqos/notify"), std::string::npos);
}

TEST(SystemdNotifier, RejectsARelativeSocketPath) {
  ScopedEnv socket("NOTIFY_SOCKET", "relative/notify");
  SystemdNotifier notifier;
  const auto result = notifier.Stopping();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().errnum, EINVAL);
}

}  // namespace
}  // namespace roceqos
