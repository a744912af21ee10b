#include "exporter/signals/ecn_pairing.h"

#include <algorithm>

namespace roceqos {
namespace {

RoleEcnCounts CountsOf(bool valid, uint64_t pauses, const std::optional<uint64_t>& events) {
  if (!valid || !events) return {};
  return {.known = true, .pause_frames = pauses, .ecn_events = *events};
}

}  // namespace

void AddRoleCounts(std::array<RoleEcnCounts, kEcnRoleCount>& into,
                   const std::array<RoleEcnCounts, kEcnRoleCount>& from) {
  for (size_t r = 0; r < kEcnRoleCount; ++r) {
    if (!from[r].known) continue;
    into[r].known = true;
    into[r].pause_frames += from[r].pause_frames;
    into[r].ecn_events += from[r].ecn_events;
  }
}

RoleEcnSignals RoleSignalsOf(const RoleEcnCounts& counts, bool quiet) {
  if (!counts.known) return quiet ? RoleEcnSignals{.known = true} : RoleEcnSignals{};
  return {.known = true,
          .pause_frames = counts.pause_frames,
          .ecn_events = counts.ecn_events,
          .pauses_per_ecn = static_cast<double>(counts.pause_frames) /
                            static_cast<double>(std::max<uint64_t>(counts.ecn_events, 1)),
          .ecn_silent = counts.pause_frames > 0 && counts.ecn_events == 0};
}

bool EcnSpan::HasPauses() const {
  for (const RoleEcnCounts& role : roles) {
    if (role.known && role.pause_frames > 0) return true;
  }
  return false;
}

std::optional<EcnSpan> EcnPairing::Add(const EcnIntervalInput& interval) {
  if (!span_start_) span_start_ = interval.from;
  rx_pauses_ += interval.rx_lossless_pauses;
  tx_pauses_ += interval.tx_lossless_pauses;
  // A counter invalid in any interval of the span (the RDMA port re-created, a failed read) has
  // no delta over the span.
  rp_valid_ = rp_valid_ && interval.rp_cnp_handled.has_value();
  np_valid_ = np_valid_ && interval.np_ecn_marked.has_value();
  if (!interval.rdma_read_at_end) return std::nullopt;
  EcnSpan span;
  span.length = interval.to - *span_start_;
  span.roles[static_cast<size_t>(EcnRole::kReactionPoint)] =
      CountsOf(rp_valid_, rx_pauses_, interval.rp_cnp_handled);
  span.roles[static_cast<size_t>(EcnRole::kNotificationPoint)] =
      CountsOf(np_valid_, tx_pauses_, interval.np_ecn_marked);
  Reset();
  return span;
}

void EcnPairing::Reset() { *this = EcnPairing(); }

std::array<uint64_t, kEcnRoleCount> EcnPairing::PendingPauses() const {
  std::array<uint64_t, kEcnRoleCount> pending{};
  pending[static_cast<size_t>(EcnRole::kReactionPoint)] = rx_pauses_;
  pending[static_cast<size_t>(EcnRole::kNotificationPoint)] = tx_pauses_;
  return pending;
}

}  // namespace roceqos
