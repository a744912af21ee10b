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

#include "collectors/netlink/socket.h"
#include "collectors/result.h"

namespace roceqos {

struct ChangeEvent {
  enum class Kind : uint8_t {
    kDcb,          // RTM_SETDCB/RTM_GETDCB notification for `netdev`
    kLink,         // RTM_NEWLINK: state, MTU, master, name may have changed
    kLinkRemoved,  // RTM_DELLINK
    kResync,       // the socket overflowed (ENOBUFS): events were lost, re-read everything
  };
  Kind kind = Kind::kDcb;
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

/// One NETLINK_ROUTE socket joined to RTNLGRP_DCB and RTNLGRP_LINK, plus an eventfd to interrupt
/// a waiting thread. Wait() is for one thread; Interrupt() may be called from any thread.
class ChangeMonitor {
 public:
  static Result<std::unique_ptr<ChangeMonitor>> Open();
  ~ChangeMonitor();
  ChangeMonitor(const ChangeMonitor&) = delete;
  ChangeMonitor& operator=(const ChangeMonitor&) = delete;

  /// Blocks until notifications arrive, Interrupt() is called or `timeout` passes; returns the
  /// events read (empty on timeout/interrupt). Unparseable messages are skipped and counted.
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
