#pragma once

#include <chrono>
#include <cstdint>

namespace roceqos {

/// Keeps the kernel cost of sampling within a share of the period (mlx5 runs ~40 firmware
/// commands under RTNL per ETHTOOL_GSTATS, docs/kernel-interfaces.md §3.5).
///
/// After each sample, Record() gets the time spent in kernel calls. A sample whose cost exceeds
/// budget × effective period is an overrun and doubles the effective period at once (up to the
/// cap): the host matters more than our resolution. The period comes back down one halving at a
/// time, and only after kCalmSamples consecutive samples whose cost would still fit in half the
/// budget of the halved period (cost ≤ budget × period / 4). The gap between the two thresholds
/// is the hysteresis: after a halving, the cost uses at most half of the budget, so a steady load
/// never flips between two periods.
class PeriodController {
 public:
  using Duration = std::chrono::nanoseconds;
  static constexpr int kCalmSamples = 8;

  /// `budget` in (0, 1]; `max_period` >= `configured`.
  PeriodController(Duration configured, double budget, Duration max_period);

  /// Returns true when this sample overran its budget.
  bool Record(Duration kernel_time);

  Duration configured() const { return configured_; }
  Duration effective() const { return effective_; }
  Duration max_period() const { return max_; }
  double budget() const { return budget_; }
  uint64_t overruns() const { return overruns_; }

 private:
  Duration configured_;
  Duration effective_;
  Duration max_;
  double budget_;
  uint64_t overruns_ = 0;
  int calm_ = 0;
};

}  // namespace roceqos
