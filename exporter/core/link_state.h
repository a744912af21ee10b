#pragma once

// What the link poller (exporter/sampling/link_poller.h) publishes: the ethtool netlink link
// figures of every selected netdev as of its last read, and the pre-FEC BER over its last
// interval. Plain data beside the snapshot that carries it, so render/ reads it without knowing
// the poller. The `ethtool -S` fallback figures are not here: they come with every sample.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "collectors/link_stats.h"

namespace roceqos {

/// One netdev's link figures, as of its last successful read.
struct LinkReading {
  LinkNetlinkStats netlink;  // each part absent where the kernel or driver lacks it
  /// Δrx_corrected_bits_phy / Δrx_bits_phy between the poller's last two rounds (`ethtool -S`
  /// values of the sampler's snapshots); absent without both counters, before the second round,
  /// after a counter reset, or when no bit was received in between.
  std::optional<double> pre_fec_ber;
  double read_seconds = 0;  // wall time of the netlink reads
};

/// What the poller publishes; the renderer reads nothing else.
struct LinkState {
  /// netdev -> its reading. A netdev whose last read failed has no entry (no stale values).
  std::map<std::string, LinkReading> links;
  uint64_t reads = 0;  // netdev reads attempted since start (one per netdev per round)
  /// reason -> failed reads since start; every reason is present (0 until it happens).
  std::map<std::string, uint64_t> errors;
  double interval_seconds = 0;    // --link.interval
  double last_round_seconds = 0;  // wall time of the last round (every netdev)
};

}  // namespace roceqos
