#pragma once

// Change notifications: DCB set operations multicast on RTNLGRP_DCB (every IEEE_SET/IEEE_DEL,
// even a failed one, docs/kernel-interfaces.md §1.7), link changes on RTNLGRP_LINK. Each becomes a
// "device X changed" event so the exporter re-reads that device at once instead of at the next
// poll. Firmware/DCBX changes and `dcb dcbx set` do not notify: polling stays the safety net.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/enum_names.h"
#include "base/result.h"
#include "collectors/netlink/socket.h"

namespace roceqos {

struct ChangeEvent {
  enum class Kind : uint8_t {
    kDcb,          // RTM_SETDCB/RTM_GETDCB notification for `netdev`
    kLink,         // RTM_NEWLINK: state, MTU, master, name may have changed
    kLinkRemoved,  // RTM_DELLINK
    kResync,       // events may have been lost (resync_reason): re-read everything
  };
  /// Why notifications may have been lost; the label of roce_qos_monitor_resyncs_total.
  enum class ResyncReason : uint8_t {
    kOverflow,   // ENOBUFS: the socket's receive buffer overflowed
    kReadError,  // any other recvmsg error (EMSGSIZE, ...) or a datagram whose framing is broken
    kMalformed,  // a well-framed message that does not parse (its change is unknown)
  };
  Kind kind = Kind::kDcb;
  ResyncReason resync_reason = ResyncReason::kOverflow;  // for kResync only
  std::string netdev;           // DCB_ATTR_IFNAME / IFLA_IFNAME; empty for kResync
  int32_t ifindex = 0;          // ifinfomsg.ifi_index for link events
  std::optional<uint32_t> mtu;  // IFLA_MTU of link events
  /// When the monitor thread woke up with the message queued: the user-space receive time, within
  /// microseconds of the kernel's multicast because the thread sleeps in poll() on the socket.
  std::chrono::steady_clock::time_point received{};
};

/// Parses one notification; nullopt for message types the monitor does not care about.
/// Malformed messages are an Error (never a crash).
Result<std::optional<ChangeEvent>> ParseChangeNotification(
    const netlink::NlMessage& message, std::chrono::steady_clock::time_point received);

inline constexpr EnumName<ChangeEvent::ResyncReason> kResyncReasonNames[] = {
    {ChangeEvent::ResyncReason::kOverflow, "overflow"},
    {ChangeEvent::ResyncReason::kReadError, "read_error"},
    {ChangeEvent::ResyncReason::kMalformed, "malformed"},
};

/// Whether one wake-up's read lost notifications: any read error (ENOBUFS or not) or any message
/// that did not parse means the consumer no longer knows every change, so it must re-read in full.
std::optional<ChangeEvent::ResyncReason> ResyncReasonFor(const Result<size_t>& read,
                                                         uint64_t malformed_messages);

/// Datagrams read per Wait() at most: a notification storm must not keep the monitor thread in
/// one call (the rest stays queued and poll() returns at once for it).
inline constexpr size_t kMaxDatagramsPerWait = 64;

/// One NETLINK_ROUTE socket joined to RTNLGRP_DCB and RTNLGRP_LINK, plus an eventfd to interrupt
/// a waiting thread. Wait() is for one thread; Interrupt() may be called from any thread.
class ChangeMonitor {
 public:
  static Result<std::unique_ptr<ChangeMonitor>> Open();
  ~ChangeMonitor();
  ChangeMonitor(const ChangeMonitor&) = delete;
  ChangeMonitor& operator=(const ChangeMonitor&) = delete;

  /// Blocks until notifications arrive, Interrupt() is called or `timeout` passes; returns the
  /// events read (empty on timeout/interrupt). A read error or an unparseable message adds one
  /// kResync event (ResyncReasonFor); unparseable messages are also counted.
  Result<std::vector<ChangeEvent>> Wait(std::chrono::milliseconds timeout);
  void Interrupt();

  uint64_t malformed_messages() const { return malformed_; }

 private:
  ChangeMonitor(netlink::Socket socket, int wake_fd);
  netlink::Socket socket_;
  int wake_fd_;
  uint64_t malformed_ = 0;
};

}  // namespace roceqos
