#pragma once

// The remediation ledger's file: with it only in memory, a crash loop (Restart=on-failure) would
// hand every device fresh attempts each time and step around --remediation.max-attempts, and a
// kill in the middle of an apply would leave a half-written device with no record. One small
// JSON file under the unit's StateDirectory=, replaced atomically (temp file, fsync, rename,
// fsync of the directory, every step checked), so a reader sees the old or the new content.
//
// Times are CLOCK_MONOTONIC nanoseconds with the boot ID they belong to: a wall-clock step (a
// wrong RTC, NTP) changes nothing, and after a reboot the times of the previous boot are read
// relative to when the file was saved (docs/remediation.md "The ledger").

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "base/result.h"

namespace roceqos {

/// One entry of the ledger: the attempts of one identity (a PCI function, or "host" for the
/// host-wide fields), whatever policy, rule or name it had.
struct PersistedDevice {
  int attempts = 0;
  bool gave_up = false;
  std::optional<std::chrono::nanoseconds> next_allowed;  // monotonic, of the file's boot
  bool apply_in_progress = false;  // written before the first write, cleared after verification
  /// Monotonic time of the last pass that saw the identity present (saved at least every
  /// kLastSeenRefresh while it is): absence is measured from it.
  std::optional<std::chrono::nanoseconds> last_seen;
  std::string netdev;  // the name it had when last seen (logs)
  bool operator==(const PersistedDevice&) const = default;
};

struct PersistedState {
  std::string boot_id;                  // /proc/sys/kernel/random/boot_id of the times below
  std::chrono::nanoseconds saved_at{};  // monotonic time of the save
  /// Identity (DeviceIdentity, or kHostIdentity) -> its record.
  std::map<std::string, PersistedDevice> devices;
  bool operator==(const PersistedState&) const = default;
};

/// The ledger key of the host-wide fields (net.ipv4.tcp_ecn).
inline constexpr std::string_view kHostIdentity = "host";
/// A present device's last_seen reaches the file at least this often.
inline constexpr std::chrono::minutes kLastSeenRefresh{10};
/// Monotonic times in the file are at most this (about 100 years of uptime): larger ones are
/// clamped, so no conversion can overflow.
inline constexpr std::chrono::nanoseconds kMaxPersistedMonotonic{3'155'760'000'000'000'000LL};
/// The file is small (one record per NIC port); anything larger is not ours.
inline constexpr size_t kMaxStateFileBytes = 1 << 20;

/// The file's text (version 3) and its parser (version 3; versions 1 and 2 keep their attempts
/// and give-ups, their wall-clock times are dropped); the parser rejects anything else with a
/// message naming the file, and never throws.
std::string SerializeRemediationState(const PersistedState& state);
Result<PersistedState> ParseRemediationState(const std::string& text, const std::string& path);

/// $STATE_DIRECTORY/remediation.json (the first directory, systemd may list several), else
/// /var/lib/roce-qos-exporter/remediation.json.
std::string DefaultRemediationStatePath();

/// Where the ledger is kept. The file implementation below; the enforce simulation keeps it in
/// memory and fails saves on purpose.
class LedgerStore {
 public:
  virtual ~LedgerStore() = default;
  /// The saved state; empty when there is none yet (first start). Anything unreadable is an
  /// error: the caller does not enforce without its history.
  virtual Result<PersistedState> Load() = 0;
  /// Durable when it returns success: a crash afterwards finds this content.
  virtual Result<void> Save(const PersistedState& state) = 0;
  virtual const std::string& path() const = 0;
};

class RemediationStore : public LedgerStore {
 public:
  explicit RemediationStore(std::string path) : path_(std::move(path)) {}
  /// The file is opened without following a symlink at its path, and must be a regular file.
  Result<PersistedState> Load() override;
  /// Atomic replace (the temporary file is opened O_NOFOLLOW|O_EXCL after removing a stale one,
  /// so a planted symlink cannot redirect the write); creates the directory if needed; the
  /// file and then its directory are fsynced, and a failure of either is an error.
  Result<void> Save(const PersistedState& state) override;
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
};

/// This boot's ID (/proc/sys/kernel/random/boot_id), or "" when it cannot be read.
std::string CurrentBootId();

}  // namespace roceqos
