#pragma once

// Pairs a port's lossless pause frames with the RDMA congestion counters read over the same span.
// The sampler reads the RDMA counters less often than ethtool's (port_scheduler.h: at most every
// 2 s while the port moves, every 30 s at rest) and carries the last read forward in between, so
// an interval's RDMA delta is zero until the next read, then holds everything since the one
// before. Compared interval by interval, that reads "pauses without ECN" between two reads: the
// pauses are held here until the RDMA counters are read again, and the two are compared over the
// span between the reads (docs/signals.md, "PFC against ECN, per role").

#include <array>
#include <cstdint>
#include <optional>

#include "exporter/core/derived_signals.h"
#include "exporter/signals/storm.h"

namespace roceqos {

/// One role's counts over a span.
struct RoleEcnCounts {
  bool known = false;  // the role's RDMA counter was read at both ends of the span
  uint64_t pause_frames = 0;
  uint64_t ecn_events = 0;
};

/// The pauses and congestion counts between two reads of the RDMA counters.
struct EcnSpan {
  std::array<RoleEcnCounts, kEcnRoleCount> roles{};  // indexed by EcnRole
  SampleTime length{};
  bool HasPauses() const;
};

/// What one usable interval contributes.
struct EcnIntervalInput {
  SampleTime from{};
  SampleTime to{};
  uint64_t rx_lossless_pauses = 0;  // pause frames received on lossless priorities
  uint64_t tx_lossless_pauses = 0;  // pause frames sent on lossless priorities
  /// The RDMA counters were read anew at `to`: the deltas below cover the span since the last read.
  bool rdma_read_at_end = false;
  std::optional<uint64_t> rp_cnp_handled;  // delta; empty when not valid in the interval
  std::optional<uint64_t> np_ecn_marked;   // delta; empty when not valid in the interval
};

/// Adds `from`'s known counts into `into`.
void AddRoleCounts(std::array<RoleEcnCounts, kEcnRoleCount>& into,
                   const std::array<RoleEcnCounts, kEcnRoleCount>& from);

/// The quotient and the silent flag of a role's counts over a window. A window without a closed
/// span is still known when its intervals had the role's counter and no pause waits for the next
/// read (`quiet`): there is nothing to compare, and nothing is silent.
RoleEcnSignals RoleSignalsOf(const RoleEcnCounts& counts, bool quiet);

class EcnPairing {
 public:
  /// Adds an interval; returns the span it closes when the RDMA counters were read at its end.
  std::optional<EcnSpan> Add(const EcnIntervalInput& interval);
  /// An interval that cannot be used: the pauses held so far have no RDMA counterpart.
  void Reset();
  /// Pause frames of the span under way, by EcnRole: they wait for the next read.
  std::array<uint64_t, kEcnRoleCount> PendingPauses() const;

 private:
  std::optional<SampleTime> span_start_;
  uint64_t rx_pauses_ = 0;
  uint64_t tx_pauses_ = 0;
  bool rp_valid_ = true;  // the role's counter was valid in every interval of the span
  bool np_valid_ = true;
};

}  // namespace roceqos
