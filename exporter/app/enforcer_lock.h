#pragma once

// One enforcer per node. Two exporters that both enforce would fight over the same device (each
// one's write is the other's drift) and double every disruptive write, so --remediation=enforce
// takes an exclusive flock(2) on --remediation.lock-file first; an instance that finds it held
// stays in observe mode and says so (log and roce_qos_remediation_enforce_held_elsewhere).
// flock locks die with the process (kill -9 included), so a crash never leaves a stale lock.

#include <string>

#include "base/result.h"
#include "exporter/app/config.h"
#include "exporter/qos/remediate.h"

namespace roceqos {

class EnforcerLock {
 public:
  EnforcerLock() = default;
  EnforcerLock(EnforcerLock&& other) noexcept;
  EnforcerLock& operator=(EnforcerLock&& other) noexcept;
  EnforcerLock(const EnforcerLock&) = delete;
  EnforcerLock& operator=(const EnforcerLock&) = delete;
  ~EnforcerLock();

  /// Creates the lock file (and its directory) and tries LOCK_EX|LOCK_NB. A lock held by another
  /// process is not an error: held() is false and holder() names its pid (written by it). Errors
  /// are the file or directory that cannot be created or opened, and a lock path that is a
  /// symlink (O_NOFOLLOW): a lock reached through a link another writer may resolve differently
  /// no longer excludes it.
  static Result<EnforcerLock> Acquire(const std::string& path);

  bool held() const { return fd_ >= 0; }
  /// True while held() and the lock path still names the locked file: `lstat(path)` (a symlink
  /// is not followed) shows the dev and inode `fstat` shows for the locked descriptor. False
  /// once the file was deleted, renamed, or replaced by another file or a symlink: another
  /// instance could then create a new file there and take a second lock.
  bool StillHeld() const;
  const std::string& path() const { return path_; }
  /// The holder's pid as it wrote it into the file, when held elsewhere ("" if unknown).
  const std::string& holder() const { return holder_; }

 private:
  int fd_ = -1;
  std::string path_;
  std::string holder_;
};

/// Start-up of enforce mode: takes `lock` on config.remediation_lock_file. Returns the mode to
/// run in: `mode` itself, or off (observe) with `held_elsewhere` set when another instance
/// enforces. An error (the lock file cannot be created) refuses to start.
Result<RemediationMode> ClaimEnforcement(const Config& config, RemediationMode mode,
                                         EnforcerLock& lock, bool& held_elsewhere);

/// Enforce mode's state file (--remediation.state-file or its default); empty for the other
/// modes. Never an error: a file that cannot be used suspends enforce (Remediator), so a sick
/// node keeps its monitoring.
Result<std::string> RemediationStateFile(const Config& config, RemediationMode mode);

}  // namespace roceqos
