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

#include "collectors/result.h"

namespace roceqos {

struct PersistedDevice {
  std::string policy_hash;  // PolicyFingerprint the attempts were made for
  int attempts = 0;
  bool gave_up = false;
  std::optional<std::chrono::system_clock::time_point> next_allowed;  // wall clock
  bool apply_in_progress = false;  // written before the first write, cleared after verification
  bool operator==(const PersistedDevice&) const = default;
};
using PersistedState = std::map<std::string, PersistedDevice>;  // netdev ->

/// The file's text (version 1) and its parser; the parser rejects anything else with a message
/// naming the file.
std::string SerializeRemediationState(const PersistedState& state);
Result<PersistedState> ParseRemediationState(const std::string& text, const std::string& path);

/// $STATE_DIRECTORY/remediation.json (the first directory, systemd may list several), else
/// /var/lib/roce-qos-exporter/remediation.json.
std::string DefaultRemediationStatePath();

class RemediationStore {
 public:
  explicit RemediationStore(std::string path) : path_(std::move(path)) {}
  /// The saved state; empty when the file does not exist (first start). A file that does not
  /// parse is an error (the caller logs it and starts empty).
  Result<PersistedState> Load() const;
  /// Atomic replace. Creates the directory if needed.
  Result<void> Save(const PersistedState& state) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace roceqos
