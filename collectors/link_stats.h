#pragma once

// Physical link health through ethtool generic netlink (docs/link.md, docs/kernel-interfaces.md
// §11): FEC statistics (ETHTOOL_MSG_FEC_GET), the IEEE 802.3 standard statistics groups eth-phy
// and eth-mac (ETHTOOL_MSG_STATS_GET) and the link state with its link-down count
// (ETHTOOL_MSG_LINKSTATE_GET). On mlx5 each of these is a firmware register read (PPCNT, PDDR):
// call it on the link poller's cadence, never from the counter sampler.
//
// Each message answers EOPNOTSUPP on a kernel or driver without it (5.10 has none of the three
// statistics): that part is absent, not failed, and the figure falls back to mlx5's `ethtool -S`
// names (collectors/ethtool_map.h, MapMlx5LinkNames).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/netlink/socket.h"

namespace roceqos {

/// ETHTOOL_MSG_FEC_GET_REPLY, requested with ETHTOOL_FLAG_STATS.
struct FecReply {
  /// ETHTOOL_A_FEC_ACTIVE: the active FEC mode as an ETHTOOL_LINK_MODE_FEC_*_BIT link-mode bit.
  std::optional<uint32_t> active_link_mode = std::nullopt;
  /// ETHTOOL_A_FEC_STAT_*: element 0 is the total, the rest per lane; empty when not reported.
  std::vector<uint64_t> corrected_blocks = {};
  std::vector<uint64_t> uncorrectable_blocks = {};
  std::vector<uint64_t> corrected_bits = {};
};

/// The label value of an active FEC mode: "none", "rs", "baser", "llrs", else "other".
std::string_view FecModeName(uint32_t link_mode_bit);

/// ETHTOOL_MSG_STATS_GET_REPLY for the groups eth-phy and eth-mac: the two figures read from it.
struct StdStatsReply {
  std::optional<uint64_t> symbol_errors = std::nullopt;  // eth-phy SymbolErrorDuringCarrier
  std::optional<uint64_t> fcs_errors = std::nullopt;     // eth-mac FrameCheckSequenceErrors
};

/// ETHTOOL_MSG_LINKSTATE_GET_REPLY.
struct LinkStateReply {
  std::optional<bool> link_up = std::nullopt;  // ETHTOOL_A_LINKSTATE_LINK
  /// ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT (6.2+).
  std::optional<uint64_t> link_down_events = std::nullopt;
};

/// Reply parsers, public so hand-built and fuzzed replies drive them. A malformed reply is an
/// Error (errnum 0) naming the attribute; an attribute the kernel did not send stays absent.
Result<FecReply> ParseFecReply(const netlink::NlMessage& reply);
Result<StdStatsReply> ParseStdStatsReply(const netlink::NlMessage& reply);
Result<LinkStateReply> ParseLinkStateReply(const netlink::NlMessage& reply);

/// The kernel access, behind an interface so tests feed replies. Errors carry the errno:
/// EOPNOTSUPP when the kernel or driver lacks the message, ENODEV for a vanished netdev.
class LinkStatsIo {
 public:
  virtual ~LinkStatsIo() = default;
  virtual Result<FecReply> ReadFec(const std::string& ifname) = 0;
  virtual Result<StdStatsReply> ReadStdStats(const std::string& ifname) = 0;
  virtual Result<LinkStateReply> ReadLinkState(const std::string& ifname) = 0;
};

/// ethtool generic netlink on its own NETLINK_GENERIC socket; the family is resolved on first use
/// (ENOENT before 5.6: every read is then EOPNOTSUPP). Not thread-safe.
std::unique_ptr<LinkStatsIo> MakeKernelLinkStatsIo();

/// What one netlink round read of one netdev; each part absent when the kernel lacks it.
struct LinkNetlinkStats {
  std::optional<FecReply> fec = std::nullopt;
  std::optional<StdStatsReply> std_stats = std::nullopt;
  std::optional<LinkStateReply> state = std::nullopt;
};

/// Reads the three messages. EOPNOTSUPP from one leaves that part absent; any other error fails
/// the read (a vanished netdev: ENODEV).
Result<LinkNetlinkStats> ReadLinkNetlinkStats(LinkStatsIo& io, const std::string& ifname);

}  // namespace roceqos
