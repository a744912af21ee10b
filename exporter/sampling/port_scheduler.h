#pragma once

// Which ports a sampler wake reads, so that the kernel duty cycle (time inside device kernel
// calls per second; on mlx5 one ETHTOOL_GSTATS is tens of firmware commands under RTNL) stays
// within --sampler.duty-cycle while a PFC storm is still confirmed quickly (docs/performance.md,
// "Sampling cost on the node"; docs/decisions.md, "Sample fast only where it matters").
//
// A port is idle when its counters did not move at its last read, active when they did. Each
// class has one due time, so its ports are read together in one wake (a wake per port costs far
// more CPU than the reads). The periods follow the measured cost of a wake of the class (the
// reads of its ports, each at the median of the port's last kCostWindow reads, so a read that
// waited for RTNL behind someone else's slow call does not stretch the periods):
//   idle   = max(--sampler.idle-period, --sampler.period, idle wake cost / (duty / 2 × kMargin))
//   active = max(--sampler.period, active wake cost / (duty × kMargin − idle share − RDMA share))
// so idle ports take at most half the duty cycle and the reads together at most all of it. The
// device time outside the class wakes (the QoS engine's DCB poll, storm follow-ups, reads after a
// change notification) is not budgeted: taking it from the fast class would slow the storm
// detection of busy ports to pay for the QoS poll (docs/performance.md). Both periods stop
// at max_period, the sampler's longest period: a snapshot at least that often is what health,
// the systemd watchdog and discovery rely on. A port moves when its ethtool counters moved at
// its last read or its RDMA counters at their last read. The RDMA counters of a port (one
// STAT_GET: QUERY_Q_COUNTER and the congestion counters, a few firmware commands against GSTATS'
// tens, and no RTNL) are read at its first read, with its reads at most every kRdmaActivePeriod
// while it moves, at the read where it stops (their resting values), and every kRdmaRefresh
// anyway. A port the signal derivation wants read early (Urgent: a storm's follow-up) is read
// then, alone.

#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace roceqos {

struct PortScheduleOptions {
  /// Floor of every period, the active one's (--sampler.period, or the period the budget
  /// stretched it to).
  std::chrono::nanoseconds fast_period = std::chrono::milliseconds(250);
  /// Floor of the idle period (--sampler.idle-period); zero: no schedule, every wake reads every
  /// port.
  std::chrono::nanoseconds idle_period{0};
  double duty_cycle = 0.02;  // --sampler.duty-cycle, in (0, 1]
  /// Ceiling of every period (the sampler's max period, kDefaultMaxPeriodFactor × its period).
  std::chrono::nanoseconds max_period = std::chrono::seconds(4);
};

/// Time inside device kernel calls per second over a sliding window.
class DutyCycle {
 public:
  using Duration = std::chrono::nanoseconds;
  explicit DutyCycle(Duration window = std::chrono::seconds(10)) : window_(window) {}
  /// Kernel time spent by the wake that started at `start`.
  void Record(Duration start, Duration kernel);
  /// Kernel time per second over the last window (over the time since the first record while
  /// shorter), in [0, 1].
  double Ratio(Duration now) const;

 private:
  Duration window_;
  std::optional<Duration> first_;
  std::deque<std::pair<Duration, Duration>> records_;
};

/// The cost of one read: the median of the last kSize, robust to a read that waited for a lock.
class ReadCost {
 public:
  static constexpr size_t kSize = 8;
  void Add(std::chrono::nanoseconds cost);
  double Nanoseconds() const;  // 0 before the first read

 private:
  std::array<double, kSize> values_{};
  size_t count_ = 0;
  size_t next_ = 0;
};

class PortScheduler {
 public:
  using Duration = std::chrono::nanoseconds;
  /// Share of the duty cycle the periods aim for: the rest absorbs the cost's variance.
  static constexpr double kMargin = 0.95;
  static constexpr Duration kRdmaActivePeriod = std::chrono::seconds(2);
  static constexpr Duration kRdmaRefresh = std::chrono::seconds(30);

  explicit PortScheduler(PortScheduleOptions options) : options_(options) {}

  bool enabled() const { return options_.idle_period.count() > 0; }
  void SetFastPeriod(Duration period) { options_.fast_period = period; }
  /// Keeps the state of these ports only (the selection after a discovery).
  void Retain(std::span<const std::string> ports);
  /// Makes every port due at the next wake (a change notification).
  void ReadAllNext() { read_all_ = true; }

  bool EthtoolDue(const std::string& port, Duration now) const;
  /// Asked after the port's ethtool read; `ethtool_moved`: that read's counters moved.
  bool RdmaDue(const std::string& port, Duration now, bool ethtool_moved) const;
  bool AnyDue(Duration now) const;
  /// The earliest time a port falls due; without ports, the idle class's next time.
  std::optional<Duration> NextDue() const;

  /// A read of the port's ethtool counters that took `cost`; `moved`: any counter changed. Called
  /// after the read's RecordRdma, if any: the port moves if either moved.
  void RecordEthtool(const std::string& port, Duration now, Duration cost, bool moved);
  /// A read of the port's RDMA counters; `moved`: any of them changed since the previous one.
  void RecordRdma(const std::string& port, Duration now, Duration cost, bool moved);
  /// The port must be read at `at`, whatever its class.
  void Urgent(const std::string& port, Duration at);
  /// Ends a wake: each class that was due gets its next due time.
  void EndWake(Duration now);

  Duration IdlePeriod() const;
  Duration ActivePeriod() const;

 private:
  enum Class : uint8_t { kIdle = 0, kActive = 1 };
  struct Port {
    bool read = false;
    bool active = false;
    std::optional<Duration> urgent;
    bool rdma_read = false;
    bool rdma_moved = false;  // at the last RDMA read
    Duration last_rdma{};
    ReadCost cost;
    ReadCost rdma_cost;
  };
  /// Device time of one wake of the class: its ports' reads, each at the median of its last ones.
  double WakeCost(Class c) const;

  PortScheduleOptions options_;
  std::map<std::string, Port, std::less<>> ports_;
  std::array<Duration, 2> due_{};  // per class
  bool read_all_ = false;
};

}  // namespace roceqos
