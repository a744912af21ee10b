#pragma once

// Remediation state that must survive a restart: with it only in memory, a crash loop
// (Restart=on-failure) would hand every device fresh attempts each time and step around
// --remediation.max-attempts, and a kill in the middle of an apply would leave a half-written
// device with no record. One small JSON file under the unit's StateDirectory=, replaced
// atomically (temp file, fsync, rename, fsync of the directory), so a reader sees the old or the
// new content, never a mix.

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "base/result.h"

namespace roceqos {

struct PersistedDevice {
  std::string policy_hash;  // WrittenFieldsFingerprint the attempts were made for
  int attempts = 0;
  bool gave_up = false;
  std::optional<std::chrono::system_clock::time_point> next_allowed;  // wall clock
  bool apply_in_progress = false;  // written before the first write, cleared after verification
  /// Wall clock of the last pass that saw the device: a device that vanished is kept (with its
  /// give-up) for a while after it, then dropped.
  std::optional<std::chrono::system_clock::time_point> last_seen;
  std::string netdev;  // the name it had when last seen (logs; a version 1 file's key)
  bool operator==(const PersistedDevice&) const = default;
};
/// Device identity (DeviceIdentity: "pci:<address>" or "netdev:<name>") -> its record. A
/// version 1 file was keyed by netdev name; it loads as "netdev:<name>" records.
using PersistedState = std::map<std::string, PersistedDevice>;

/// Restored times lie between the epoch and this (2100-01-01): later ones are clamped, so no
/// conversion to steady-clock nanoseconds can overflow.
inline constexpr double kMaxPersistedUnixSeconds = 4102444800.0;
/// The file is small (one record per NIC port); anything larger is not ours.
inline constexpr size_t kMaxStateFileBytes = 1 << 20;

/// The file's text (version 2) and its parser (versions 1 and 2); the parser rejects anything
/// else with a message naming the file, and never throws.
std::string SerializeRemediationState(const PersistedState& state);
Result<PersistedState> ParseRemediationState(const std::string& text, const std::string& path);

/// $STATE_DIRECTORY/remediation.json (the first directory, systemd may list several), else
/// /var/lib/roce-qos-exporter/remediation.json.
std::string DefaultRemediationStatePath();

class RemediationStore {
 public:
  explicit RemediationStore(std::string path) : path_(std::move(path)) {}
  /// The saved state; empty when the file does not exist (first start). A file that cannot be
  /// read or does not parse is an error: the caller does not enforce without its history.
  Result<PersistedState> Load() const;
  /// Atomic replace (the temporary file is opened O_NOFOLLOW|O_EXCL after removing a stale one,
  /// so a planted symlink cannot redirect the write). Creates the directory if needed.
  Result<void> Save(const PersistedState& state) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace roceqos
