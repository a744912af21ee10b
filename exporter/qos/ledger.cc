#include "exporter/qos/ledger.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/log_event.h"

namespace roceqos {
namespace {

using std::chrono::nanoseconds;

nanoseconds Ns(Ledger::Clock::time_point t) { return t.time_since_epoch(); }

// Equal but for last_seen, which may trail by up to kLastSeenRefresh in the file.
bool SameButLastSeen(const std::map<std::string, PersistedDevice>& a,
                     const std::map<std::string, PersistedDevice>& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    PersistedDevice x = ia->second;
    const PersistedDevice& y = ib->second;
    if (x.last_seen && y.last_seen && *x.last_seen - *y.last_seen < kLastSeenRefresh)
      x.last_seen = y.last_seen;
    if (ia->first != ib->first || !(x == y)) return false;
  }
  return true;
}

}  // namespace

std::chrono::seconds BackoffAfter(int attempts, std::chrono::seconds base,
                                  std::chrono::seconds max) {
  std::chrono::seconds wait = base;
  for (int i = 1; i < attempts && wait < max; ++i) wait *= 2;  // stops before it can overflow
  return std::min(wait, max);
}

Ledger::Ledger(LedgerOptions options, LedgerStore* store, std::string boot_id, Now now)
    : options_(options), store_(store), boot_id_(std::move(boot_id)), now_(std::move(now)) {}

const std::string& Ledger::path() const {
  static const std::string kNone;
  return store_ ? store_->path() : kNone;
}

void Ledger::Suspend(const std::string& reason, const std::string& error) {
  if (!suspended_reason_.empty()) return;
  suspended_reason_ = reason;
  LogEvent(spdlog::level::err,
           "remediation: enforce suspended for the life of this process, observing only; fix the "
           "state file and restart",
           {{"reason", reason}, {"path", path()}, {"error", error}});
}

Ledger::Entry Ledger::Adopt(const Entry& saved, const PersistedState& file,
                            Clock::time_point now) const {
  Entry e = saved;
  const nanoseconds longest = options_.max_backoff;
  if (e.next_allowed) {
    // Another boot (or no boot ID): the wait left is what was left when the file was saved. A
    // wait longer than any back-off (a hand-edited file) is cut to the longest one.
    if (file.boot_id == boot_id_ && !boot_id_.empty())
      e.next_allowed = std::min(*e.next_allowed, Ns(now) + longest);
    else
      e.next_allowed =
          Ns(now) + std::clamp(*e.next_allowed - file.saved_at, nanoseconds(0), longest);
  }
  // Absence is measured within this boot only: after a reboot it starts over.
  if (file.boot_id != boot_id_ || boot_id_.empty() || !e.last_seen || *e.last_seen > Ns(now))
    e.last_seen = Ns(now);
  return e;
}

void Ledger::Load(Clock::time_point now) {
  if (store_ == nullptr) return;
  Result<PersistedState> loaded = store_->Load();
  if (!loaded) return Suspend("state_unreadable", loaded.error().message);
  for (const auto& [identity, saved] : loaded->devices) {
    entries_[identity] = Adopt(saved, *loaded, now);
    interrupted_[identity] = saved.apply_in_progress;
    if (saved.apply_in_progress)
      LogEvent(spdlog::level::warn,
               "remediation: the previous process ended in the middle of an apply; the device "
               "may be half-written: it is re-read and re-planned from what it shows now",
               {{"device", identity}, {"netdev", saved.netdev}, {"attempt", saved.attempts}});
  }
  // Written back now: a directory that cannot take the file is found at start, not mid-apply.
  Save();
}

const Ledger::Entry& Ledger::Get(const std::string& identity) const {
  static const Entry kNone;
  auto it = entries_.find(identity);
  return it == entries_.end() ? kNone : it->second;
}

bool Ledger::Interrupted(const std::string& identity) const {
  auto it = interrupted_.find(identity);
  return it != interrupted_.end() && it->second;
}

Ledger::Verdict Ledger::Check(const std::string& identity, Clock::time_point now) const {
  if (!suspended_reason_.empty()) return Verdict::kUnavailable;
  const Entry& e = Get(identity);
  if (e.gave_up) return Verdict::kGaveUp;
  if (e.next_allowed && Ns(now) < *e.next_allowed) return Verdict::kBackoff;
  if (e.attempts >= options_.max_attempts) return Verdict::kExhausted;
  return Verdict::kAllowed;
}

bool Ledger::BeginAttempt(const std::string& identity, const std::string& netdev) {
  if (!suspended_reason_.empty()) return false;
  const Clock::time_point now = now_();
  Entry& e = entries_[identity];
  ++e.attempts;
  e.next_allowed =
      Ns(now) + nanoseconds(BackoffAfter(e.attempts, options_.base_backoff, options_.max_backoff));
  e.apply_in_progress = true;
  e.netdev = netdev;
  e.last_seen = Ns(now);
  if (Save()) return true;
  e.apply_in_progress = false;
  return false;
}

void Ledger::EndAttempt(const std::string& identity) {
  auto it = entries_.find(identity);
  if (it == entries_.end() || !it->second.apply_in_progress) return;
  it->second.apply_in_progress = false;
  interrupted_.erase(identity);
  Save();
}

void Ledger::GiveUp(const std::string& identity) {
  Entry& e = entries_[identity];
  if (e.gave_up) return;
  e.gave_up = true;
  Save();
}

void Ledger::Reset(const std::string& identity) {
  auto it = entries_.find(identity);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.attempts = 0;
  e.gave_up = false;
  e.next_allowed.reset();
  interrupted_.erase(identity);
  Save();
}

void Ledger::Seen(const std::string& identity, const std::string& netdev, Clock::time_point now) {
  auto it = entries_.find(identity);
  if (it == entries_.end()) return;  // nothing recorded: nothing to keep
  it->second.last_seen = Ns(now);
  it->second.netdev = netdev;
  Save();  // only when more than last_seen changed, or it is kLastSeenRefresh old in the file
}

void Ledger::Rekey(const std::string& from, const std::string& to) {
  auto it = entries_.find(from);
  if (from == to || it == entries_.end() || entries_.contains(to)) return;
  entries_[to] = it->second;
  interrupted_[to] = Interrupted(from);
  entries_.erase(it);
  interrupted_.erase(from);
  Save();
}

void Ledger::Retain(const std::vector<std::string>& present, Clock::time_point now) {
  const size_t before = entries_.size();
  std::erase_if(entries_, [&](const auto& entry) {
    const auto& [identity, e] = entry;
    if (identity == kHostIdentity) return false;
    if (std::find(present.begin(), present.end(), identity) != present.end()) return false;
    return e.last_seen && Ns(now) - *e.last_seen >= nanoseconds(options_.forget_after);
  });
  if (entries_.size() != before) Save();
}

bool Ledger::Save() {
  if (store_ == nullptr) return suspended_reason_.empty();
  if (!suspended_reason_.empty()) return false;
  if (saved_ && SameButLastSeen(entries_, saved_->devices)) return true;
  PersistedState state{boot_id_, Ns(now_()), entries_};
  if (Result<void> saved = store_->Save(state); !saved) {
    Suspend("state_unwritable", saved.error().message);
    return false;
  }
  saved_ = std::move(state);
  return true;
}

}  // namespace roceqos
