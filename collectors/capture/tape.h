#pragma once

// The record/replay seam under every collector (docs/capture.md). The three places where the
// collectors touch the kernel call these hooks: netlink::Socket (requests and their replies),
// EthtoolIoctl (SIOCETHTOOL) and the file helpers of sysfs_file.h. In the default live mode the
// hooks do nothing. Recording copies each exchange into a Bundle; replaying answers each one from
// a Bundle and never reaches the kernel. The mode is process-wide and set once, before any
// collector runs (capture and --replay do it first thing); the hooks are thread-safe.

#include <optional>
#include <string>
#include <string_view>

#include "collectors/capture/tape_bundle.h"

namespace roceqos::tape {

enum class Mode { kLive, kRecord, kReplay };

Mode CurrentMode();
inline bool Recording() { return CurrentMode() == Mode::kRecord; }
inline bool Replaying() { return CurrentMode() == Mode::kReplay; }

/// Starts recording into an empty bundle.
void StartRecording();
/// Stops recording and returns what was recorded (meta is left for the caller to fill).
Bundle StopRecording();
/// Answers every kernel access from `bundle` from now on.
void StartReplay(Bundle bundle);
/// Back to live mode (tests).
void Reset();

/// Hooks, called by the seams. Record* do nothing unless recording.
void RecordNetlink(NetlinkExchange exchange);
void RecordIoctl(IoctlExchange exchange);
void RecordFs(FsEntry entry);

/// Replay lookups. Deterministic: the n-th identical request gets the n-th recorded answer,
/// and once they are used up the last one again (counters repeat their last value). nullopt:
/// the bundle has no such request.
std::optional<NetlinkExchange> ReplayNetlink(int protocol, const Blob& request);
std::optional<IoctlExchange> ReplayIoctl(std::string_view ifname, const Blob& in);
std::optional<FsEntry> ReplayFs(std::string_view op, std::string_view path);

/// Zeroes the per-run fields of a netlink request (nlmsg_seq, nlmsg_pid) so identical requests
/// compare equal across runs.
Blob NormalizedRequest(const Blob& request);

/// The part of a SIOCETHTOOL command buffer the kernel reads: the fixed struct of its ETHTOOL_*
/// cmd. The data area after it (GSTRINGS names, GSTATS values, GSSET_INFO lengths, GTUNABLE
/// value, module EEPROM bytes) is output only, and the caller's buffer holds whatever an earlier
/// call left there (the ethtool collector reuses one buffer for every netdev), so it is neither
/// recorded nor matched. Unknown commands are kept whole.
Blob NormalizedIoctl(const Blob& command);

/// Drops every rtnetlink RTM_NEWLINK attribute the exporter does not read (MAC and broadcast
/// addresses, IFLA_AF_SPEC, bond/vlan data with their IP targets, statistics, ...) from a
/// datagram before it is recorded; other messages pass unchanged. Kept: IFLA_IFNAME, IFLA_MTU,
/// IFLA_MASTER, IFLA_OPERSTATE and, inside IFLA_LINKINFO, IFLA_INFO_KIND and IFLA_INFO_SLAVE_KIND.
Blob SanitizeRouteDatagram(const Blob& datagram);

}  // namespace roceqos::tape
