#pragma once

// The link poller: its own thread reads the ethtool netlink link figures (FEC statistics, the
// eth-phy and eth-mac standard statistics, the link state and its link-down count;
// collectors/link_stats.h) of every selected netdev once per --link.interval and publishes an
// immutable LinkState, which the sampler attaches to its snapshot like the transceiver poller's.
// On mlx5 each of these reads is a firmware register access (PPCNT), so they stay off the
// counter sampler's thread. The `ethtool -S` fallback figures need no read here: the sampler
// reads them every sample.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/published.h"
#include "collectors/link_stats.h"
#include "exporter/core/fault_log.h"
#include "exporter/core/link_state.h"
#include "exporter/core/periodic_thread.h"

namespace roceqos {

struct LinkPollerOptions {
  std::chrono::nanoseconds interval = std::chrono::seconds(10);
};

/// rx_corrected_bits_phy and rx_bits_phy of one netdev from the latest sample, for the BER.
struct PhyBitCounts {
  uint64_t corrected = 0;
  uint64_t received = 0;
};

class LinkPoller {
 public:
  /// The netdevs to read (the sampler's current selection); called on the poller thread.
  using Netdevs = std::function<std::vector<std::string>()>;
  /// netdev -> its bit counters where the latest sample has both (called once per round).
  using BitCounts = std::function<std::map<std::string, PhyBitCounts>()>;
  using Clock = std::function<std::chrono::nanoseconds()>;

  LinkPoller(LinkPollerOptions options, std::unique_ptr<LinkStatsIo> io, Netdevs netdevs,
             BitCounts bit_counts = {}, Clock clock = {});
  ~LinkPoller();
  LinkPoller(const LinkPoller&) = delete;
  LinkPoller& operator=(const LinkPoller&) = delete;

  /// Reads every netdev once and publishes. Not concurrently with itself or a running thread.
  void PollOnce();

  /// Starts the thread (first round immediately, then every interval); Stop() joins. Idempotent.
  void Start();
  void Stop();

  /// The latest published state; null before the first round. Thread-safe, never blocks.
  std::shared_ptr<const LinkState> Latest() const { return latest_.Load(); }

 private:
  /// The BER between the previous round's bit counts and `now`; remembers `now`.
  std::optional<double> PreFecBer(const std::string& netdev, const PhyBitCounts* now);

  LinkPollerOptions options_;
  std::unique_ptr<LinkStatsIo> io_;
  Netdevs netdevs_;
  BitCounts bit_counts_;
  Clock clock_;
  FaultLog fault_log_;
  uint64_t reads_ = 0;
  std::map<std::string, uint64_t> errors_;
  std::map<std::string, PhyBitCounts> previous_bits_;
  Published<LinkState> latest_;
  PeriodicThread thread_;  // last: stopped before the members its rounds use are destroyed
};

}  // namespace roceqos
