#pragma once

// One libmnl-based netlink layer for every family the exporter speaks: rtnetlink (links, DCB),
// generic netlink (ethtool, if ever needed) and NETLINK_RDMA.

#include <linux/netlink.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "collectors/netlink/attr.h"
#include "collectors/result.h"

struct mnl_socket;

namespace roceqos::netlink {

/// A request under construction: nlmsghdr + optional fixed family header + attributes.
/// Thin wrapper over libmnl's mnl_nlmsg_put_header/mnl_attr_put_* on an owned buffer.
class Message {
 public:
  Message(uint16_t type, uint16_t flags);  // NLM_F_REQUEST is always added

  /// Appends the fixed family header (struct dcbmsg, struct ifinfomsg, ...); call before attrs.
  void PutHeader(const void* header, size_t len);
  void PutU8(uint16_t type, uint8_t v);
  void PutU16(uint16_t type, uint16_t v);
  void PutU32(uint16_t type, uint32_t v);
  void PutU64(uint16_t type, uint64_t v);
  void PutString(uint16_t type, std::string_view s);  // NUL-terminated (NLA_NUL_STRING)
  void Put(uint16_t type, const void* data, size_t len);
  /// Opens a nest; returns a token for EndNest.
  size_t BeginNest(uint16_t type);
  void EndNest(size_t token);

  nlmsghdr* header();
  std::span<const std::byte> bytes() const;

 private:
  std::vector<std::byte> buffer_;
};

/// Called once per reply message (not for NLMSG_DONE / NLMSG_ERROR, which the socket handles).
using ReplyHandler = std::function<Result<void>(const nlmsghdr& reply)>;

/// Returns the payload after nlmsghdr and a fixed family header of `family_header_len` bytes,
/// or an Error if the message is too short.
Result<Bytes> Payload(const nlmsghdr& msg, size_t family_header_len, std::string_view context);

/// RAII netlink socket. Not thread-safe; one per thread/owner.
class Socket {
 public:
  /// protocol: NETLINK_ROUTE, NETLINK_GENERIC, NETLINK_RDMA. EPROTONOSUPPORT from socket() (no
  /// RDMA netlink in this kernel) comes back as an Error with that errno.
  static Result<Socket> Open(int protocol);

  Socket(Socket&&) noexcept;
  Socket& operator=(Socket&&) noexcept;
  ~Socket();

  /// Sends `request` with a fresh sequence number and reads replies until the ACK (doit with
  /// NLM_F_ACK), NLMSG_DONE (dump) or an NLMSG_ERROR. Checks sequence number and port id of every
  /// reply; handles multipart replies; an NLMSG_ERROR becomes an Error with the errno and the
  /// extended-ack message (NLMSGERR_ATTR_MSG) when the kernel sent one.
  Result<void> Request(Message& request, const ReplyHandler& on_reply, std::string_view context);

  /// Joins a multicast group (RTNLGRP_DCB, RTNLGRP_LINK, ...) for monitoring.
  Result<void> JoinGroup(unsigned group);
  /// Reads one datagram of notifications without blocking the caller longer than the socket's
  /// timeout; calls on_message for each message in it.
  Result<void> ReadNotifications(const ReplyHandler& on_message);
  int fd() const;
  uint32_t port_id() const;

 private:
  explicit Socket(mnl_socket* sock);
  mnl_socket* sock_ = nullptr;
  uint32_t seq_ = 0;
  std::vector<std::byte> recv_buffer_;
};

}  // namespace roceqos::netlink
