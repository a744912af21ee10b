#pragma once

// A private network namespace for tests that need a real kernel with links nobody else touches.
// Created with `ip netns add`; code runs inside it on a dedicated thread that setns()es into it
// (network namespaces are per thread), so the test process itself never leaves its netns.

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>

namespace roceqos::testing {

class PrivateNetns {
 public:
  /// nullptr when namespaces cannot be created here (not root, no iproute2); *why says why.
  static std::unique_ptr<PrivateNetns> Create(const std::string& tag, std::string* why) {
    static int counter = 0;
    std::string name =
        "roceqos-ut-" + tag + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
    if (!Shell("ip netns add " + name)) {
      *why = "`ip netns add " + name + "` failed (needs root and iproute2)";
      return nullptr;
    }
    return std::unique_ptr<PrivateNetns>(new PrivateNetns(std::move(name)));
  }

  ~PrivateNetns() { Shell("ip netns del " + name_); }

  const std::string& name() const { return name_; }

  /// Runs `ip -n <ns> <args>`; true on success.
  bool Ip(const std::string& args) const { return Shell("ip -n " + name_ + " " + args); }

  /// Runs fn() on a thread inside the namespace; false (and *why) if setns failed.
  template <typename Fn>
  bool Run(Fn&& fn, std::string* why) const {
    bool entered = false;
    std::thread worker([&] {
      const std::string path = "/run/netns/" + name_;
      const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        *why = "open " + path + ": " + std::strerror(errno);
        return;
      }
      const bool ok = setns(fd, CLONE_NEWNET) == 0;
      if (!ok) *why = std::string("setns: ") + std::strerror(errno);
      close(fd);
      if (!ok) return;
      entered = true;
      fn();
    });
    worker.join();
    return entered;
  }

 private:
  explicit PrivateNetns(std::string name) : name_(std::move(name)) {}

  static bool Shell(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
  }

  std::string name_;
};

}  // namespace roceqos::testing
