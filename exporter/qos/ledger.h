#pragma once

// The remediation ledger: how many attempts each identity (a PCI function, or "host" for the
// host-wide fields) was given since it last proved stable, its back-off and its give-up, kept in
// memory and in the state file (remediate_store.h). Keys are stable identities, never a policy,
// a rule or a netdev name, so a reload, a policy flip A->B->A, a rename or a restart hands out no
// fresh attempts. Times are monotonic. Not thread-safe: the remediation worker owns it.
// docs/remediation.md "The ledger".

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exporter/qos/remediate_store.h"

namespace roceqos {

struct LedgerOptions {
  int max_attempts = 5;
  std::chrono::seconds base_backoff{30};
  std::chrono::seconds max_backoff{600};
  /// An identity absent this long (measured on the monotonic clock, from the last time a pass saw
  /// it) is forgotten.
  std::chrono::seconds forget_after{3600};
};

class Ledger {
 public:
  using Clock = std::chrono::steady_clock;
  using Entry = PersistedDevice;

  using Now = std::function<Clock::time_point()>;
  /// `store` may be null (kept in memory only). `boot_id` is this boot's (CurrentBootId()); `now`
  /// stamps each save (tests and the simulation inject a clock).
  Ledger(LedgerOptions options, LedgerStore* store, std::string boot_id, Now now = &Clock::now);

  /// Loads the file and writes it back at once, so a directory that cannot take it is found at
  /// start. On failure the ledger is suspended (suspended_reason()) and grants nothing.
  void Load(Clock::time_point now);

  /// The entry of `identity` (default-constructed when it has none).
  const Entry& Get(const std::string& identity) const;
  /// What the previous process left: an apply under way when it ended.
  bool Interrupted(const std::string& identity) const;

  /// Whether an attempt may start now: not given up, past its back-off, below max_attempts.
  enum class Verdict : uint8_t { kAllowed, kBackoff, kExhausted, kGaveUp, kUnavailable };
  Verdict Check(const std::string& identity, Clock::time_point now) const;

  /// Counts an attempt, arms the back-off, marks an apply in progress, and saves the file. False
  /// when it could not be saved (nothing may be written then; the ledger is suspended).
  /// The back-off runs from the ledger clock's now.
  bool BeginAttempt(const std::string& identity, const std::string& netdev);
  /// The apply's verification read is done.
  void EndAttempt(const std::string& identity);
  /// max_attempts did not hold: latched until the identity proves stable (Reset).
  void GiveUp(const std::string& identity);
  /// The identity stayed fully in sync for the stable period: its attempts start from zero.
  void Reset(const std::string& identity);
  /// A pass saw the identity: its last_seen moves (saved at least every kLastSeenRefresh).
  void Seen(const std::string& identity, const std::string& netdev, Clock::time_point now);
  /// A version 1 file knew devices by netdev name: its record moves to the stable identity.
  void Rekey(const std::string& from, const std::string& to);
  /// Identities not in `present` and unseen for forget_after are dropped. kHostIdentity is kept.
  void Retain(const std::vector<std::string>& present, Clock::time_point now);

  /// Stops every grant and every save for the life of the process (the enforcer lock was lost:
  /// another process may own the file now).
  void Freeze(const std::string& reason, const std::string& detail) { Suspend(reason, detail); }
  const std::string& suspended_reason() const { return suspended_reason_; }
  const std::string& path() const;

 private:
  bool Save();
  void Suspend(const std::string& reason, const std::string& error);
  /// A loaded entry's times, from the file's boot and save time to this process's clock.
  Entry Adopt(const Entry& saved, const PersistedState& file, Clock::time_point now) const;

  LedgerOptions options_;
  LedgerStore* store_;
  std::string boot_id_;
  Now now_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, bool> interrupted_;
  std::optional<PersistedState> saved_;
  std::string suspended_reason_;
};

/// The wait after the n-th attempt (n >= 1): base × 2^(n-1), at most max; never overflows.
std::chrono::seconds BackoffAfter(int attempts, std::chrono::seconds base,
                                  std::chrono::seconds max);

}  // namespace roceqos
