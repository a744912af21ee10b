#include "exporter/app/enforcer_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "base/log_event.h"
#include "exporter/qos/remediate_store.h"

namespace roceqos {

EnforcerLock::EnforcerLock(EnforcerLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      holder_(std::move(other.holder_)) {}

EnforcerLock& EnforcerLock::operator=(EnforcerLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    holder_ = std::move(other.holder_);
  }
  return *this;
}

EnforcerLock::~EnforcerLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

Result<EnforcerLock> EnforcerLock::Acquire(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec)
    return MakeError(ec.value(), fmt::format("--remediation.lock-file: cannot create {}: {}",
                                             parent.string(), ec.message()));
  // O_CLOEXEC: a child must not inherit (and so extend) the lock. O_NOFOLLOW: the lock is the
  // file at this path, never where a symlink there points (open(2): ELOOP).
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    const int errnum = errno;
    if (errnum == ELOOP)
      return MakeError(errnum, fmt::format("--remediation.lock-file: {} is a symlink; the lock "
                                           "must be a regular file at that path",
                                           path));
    return MakeError(errnum, fmt::format("--remediation.lock-file: cannot open {}: {}", path,
                                         std::strerror(errnum)));
  }
  struct stat st = {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return MakeError(EINVAL,
                     fmt::format("--remediation.lock-file: {} is not a regular file", path));
  }
  EnforcerLock lock;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int errnum = errno;
    if (errnum != EWOULDBLOCK) {
      ::close(fd);
      return MakeError(errnum, fmt::format("--remediation.lock-file: flock {}: {}", path,
                                           std::strerror(errnum)));
    }
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    if (n > 0) lock.holder_.assign(buf, static_cast<size_t>(n));
    while (!lock.holder_.empty() && (lock.holder_.back() == '\n' || lock.holder_.back() == ' '))
      lock.holder_.pop_back();
    return lock;
  }
  // The pid is for the operator and the refused instance's log only; the lock is the flock.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // Not fatal: the lock is held either way.
  }
  lock.fd_ = fd;
  lock.path_ = path;
  return lock;
}

bool EnforcerLock::StillHeld() const {
  if (fd_ < 0) return false;
  struct stat held = {};
  struct stat named = {};
  if (::fstat(fd_, &held) != 0) return false;
  if (::lstat(path_.c_str(), &named) != 0) return false;  // deleted or renamed away
  return S_ISREG(named.st_mode) && named.st_dev == held.st_dev && named.st_ino == held.st_ino;
}

Result<RemediationMode> ClaimEnforcement(const Config& config, RemediationMode mode,
                                         EnforcerLock& lock, bool& held_elsewhere) {
  held_elsewhere = false;
  if (mode != RemediationMode::kEnforce) return mode;
  Result<EnforcerLock> acquired = EnforcerLock::Acquire(config.remediation_lock_file);
  if (!acquired) return acquired.error();
  if (!acquired->held()) {
    held_elsewhere = true;
    LogEvent(spdlog::level::warn,
             "--remediation=enforce: another instance holds the enforcer lock; this one observes "
             "and writes nothing (roce_qos_remediation_enforce_held_elsewhere 1)",
             {{"holder_pid", acquired->holder().empty() ? "unknown" : acquired->holder()},
              {"lock_file", config.remediation_lock_file}});
    return RemediationMode::kOff;
  }
  lock = std::move(*acquired);
  return mode;
}

Result<std::string> RemediationStateFile(const Config& config, RemediationMode mode) {
  if (mode != RemediationMode::kEnforce) return std::string();
  // Whether it can be read and written is the remediator's to find out at start: a state file
  // that fails suspends enforce (observe, alert), it does not take the node's monitoring down.
  return config.remediation_state_file.empty() ? DefaultRemediationStatePath()
                                               : config.remediation_state_file;
}

}  // namespace roceqos
