#pragma once

// One libmnl-based netlink layer for every family the exporter speaks: rtnetlink (links, DCB),
// generic netlink (see genl.h) and NETLINK_RDMA.
//
// Requests: Socket::Request sends one message and reads replies until the exchange is complete
// (ACK, NLMSG_DONE, the single doit reply, or an NLMSG_ERROR), checking sequence and port id.
// Monitoring: open a separate Socket, JoinGroup(), poll() its fd() for POLLIN and call
// ReadNotifications(), which never blocks.

#include <linux/netlink.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/netlink/attr.h"

struct mnl_socket;

namespace roceqos::netlink {

/// A request under construction: nlmsghdr + optional fixed family header + attributes.
/// Thin wrapper over libmnl's mnl_nlmsg_put_header/mnl_attr_put*/mnl_attr_nest_* on an owned
/// buffer that grows as needed. Tests also use it to build replies.
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

  /// False when an attribute or nest outgrew netlink's 16-bit length fields; such a message is
  /// never sent (Socket::Request returns EMSGSIZE).
  bool ok() const { return ok_; }

  nlmsghdr* header();
  std::span<const std::byte> bytes() const;

 private:
  void Reserve(size_t extra);
  std::vector<std::byte> buffer_;
  bool ok_ = true;
};

/// One received message: a copy of its header and a view of the bytes after it.
struct NlMessage {
  nlmsghdr header{};
  Bytes body;  // nlmsg_len - sizeof(nlmsghdr) bytes
};

/// Called once per reply message (not for NLMSG_DONE / NLMSG_ERROR, which the socket handles).
using ReplyHandler = std::function<Result<void>(const NlMessage& reply)>;

/// Splits a datagram (or a recorded reply) into messages, checking every nlmsg_len against the
/// bytes present; calls fn for each. NLMSG_NOOP is passed through like any other type.
Result<void> ForEachMessage(Bytes datagram, std::string_view context,
                            const std::function<Result<void>(const NlMessage&)>& fn);

/// Returns the payload after a fixed family header of `family_header_len` bytes (0 for
/// NETLINK_RDMA, sizeof(ifinfomsg), sizeof(dcbmsg), GENL_HDRLEN), or an Error if the message is
/// too short.
Result<Bytes> Payload(const NlMessage& msg, size_t family_header_len, std::string_view context);

/// Copies the fixed family header (struct ifinfomsg, struct dcbmsg, struct genlmsghdr).
template <typename T>
Result<T> FamilyHeader(const NlMessage& msg, std::string_view context) {
  Result<Bytes> bytes = Payload(msg, 0, context);
  if (!bytes) return bytes.error();
  if (bytes->size() < sizeof(T)) {
    return MakeError(0, std::string(context) + ": message shorter than its " +
                            std::to_string(sizeof(T)) + "-byte family header");
  }
  T header;
  std::memcpy(&header, bytes->data(), sizeof(T));
  return header;
}

/// NLMSG_ERROR: success for an ACK (error 0); otherwise an Error with the errno and, when the
/// kernel sent extended-ack TLVs, the NLMSGERR_ATTR_MSG text (and missing-attribute / offset
/// hints): "<context>: <strerror> (<extack message>)".
Result<void> ParseErrorMessage(const NlMessage& msg, std::string_view context);
/// NLMSG_DONE: a dump's end; its int payload is the dump's error (negative errno), with extack
/// TLVs like NLMSG_ERROR.
Result<void> ParseDoneMessage(const NlMessage& msg, std::string_view context);

/// Checks and dispatches the replies of one request, datagram by datagram. Separate from the
/// socket so recorded or hand-built datagrams exercise exactly the code the socket runs.
class ReplyReader {
 public:
  /// request_flags decides when the exchange is complete: NLM_F_DUMP waits for NLMSG_DONE,
  /// NLM_F_ACK for the ACK, otherwise the first non-multipart reply completes a doit.
  ReplyReader(uint32_t seq, uint32_t port_id, uint16_t request_flags, std::string_view context);

  /// Feeds one datagram; returns true once the exchange is complete. A message for another
  /// port id, or with a sequence number this socket has not used yet, is an EPROTO Error; a
  /// message with an older sequence number (the tail of an abandoned earlier exchange) is
  /// skipped. A dump whose messages carry NLM_F_DUMP_INTR ends with an EINTR Error (the dump was
  /// inconsistent; retry it). After the first error the handler is not called again, but the
  /// rest of the datagram is still scanned for the end of the exchange (see complete()).
  Result<bool> Feed(Bytes datagram, const ReplyHandler& on_reply);

  /// True once the exchange's last message (ACK, NLMSG_ERROR, NLMSG_DONE, the doit reply) was
  /// seen. A failed exchange that is not complete must be drained: the kernel refuses a new dump
  /// (EBUSY) while the previous one on the socket is still running.
  bool complete() const { return complete_; }
  size_t stale_messages() const { return stale_; }

 private:
  /// Checks one message; returns its error, if any. Sets complete_ on the last one.
  Result<void> Check(const NlMessage& msg, const ReplyHandler& on_reply);

  uint32_t seq_;
  uint32_t port_id_;
  uint16_t request_flags_;
  std::string context_;
  bool interrupted_ = false;
  bool complete_ = false;
  bool failed_ = false;
  Error error_;
  size_t stale_ = 0;
};

struct SocketOptions {
  /// SO_RCVTIMEO: a reply that does not arrive within this time fails the request (ETIMEDOUT)
  /// instead of hanging the sampler. Zero means wait forever (SO_RCVTIMEO semantics).
  std::chrono::milliseconds receive_timeout{2000};
  /// User-space buffer for one datagram. Kernel dumps fill at most 32 KiB per datagram; a
  /// larger datagram (MSG_TRUNC) fails with EMSGSIZE rather than being parsed half.
  size_t receive_buffer_bytes = size_t{32} * 1024;
  /// SO_RCVBUF in bytes (0 = kernel default). Monitor sockets want more so bursts of
  /// notifications are not lost (ENOBUFS).
  int kernel_receive_buffer = 0;
  /// NETLINK_GET_STRICT_CHK (rtnetlink): the kernel validates request headers strictly and
  /// honours dump filters.
  bool strict_checking = false;
};

/// RAII netlink socket. Not thread-safe; one per thread/owner. Requests NETLINK_EXT_ACK (error
/// texts) and NETLINK_CAP_ACK (errors do not echo the request).
class Socket {
 public:
  /// protocol: NETLINK_ROUTE, NETLINK_GENERIC, NETLINK_RDMA. EPROTONOSUPPORT from socket() (no
  /// RDMA netlink in this kernel) comes back as an Error with that errno.
  static Result<Socket> Open(int protocol, const SocketOptions& options = {});

  Socket(Socket&&) noexcept;
  Socket& operator=(Socket&&) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  /// Sends `request` with a fresh sequence number and reads replies until the exchange is
  /// complete (see ReplyReader). An NLMSG_ERROR becomes an Error with the errno and the
  /// extended-ack message. Not allowed on a socket that joined multicast groups (EINVAL):
  /// notifications would interleave with the replies.
  Result<void> Request(Message& request, const ReplyHandler& on_reply, std::string_view context);

  /// Joins a multicast group (RTNLGRP_DCB, RTNLGRP_LINK, RDMA_NL_GROUP_NOTIFY, ...).
  Result<void> JoinGroup(unsigned group);
  /// Reads the notifications already queued (at most `max_datagrams` datagrams), without
  /// blocking, and calls on_message for each message; returns how many were dispatched (0 when
  /// nothing was pending). ENOBUFS means notifications were lost: the caller must re-read its
  /// state in full.
  Result<size_t> ReadNotifications(const ReplyHandler& on_message, size_t max_datagrams = SIZE_MAX);

  int fd() const;
  uint32_t port_id() const;

 private:
  Socket(mnl_socket* sock, const SocketOptions& options);
  /// The capture seam (collectors/capture/tape.h): a replayed request is answered from the bundle,
  /// a recorded one is copied into it.
  Result<void> ReplayRequest(Message& request, const ReplyHandler& on_reply,
                             std::string_view context);
  Result<void> Exchange(Message& request, const ReplyHandler& on_reply, std::string_view context,
                        std::vector<std::vector<std::byte>>* recorded);
  /// Receives one datagram from the kernel (other senders are dropped). blocking=false returns
  /// an empty span when nothing is queued.
  Result<Bytes> Receive(bool blocking, std::string_view context);

  mnl_socket* sock_ = nullptr;
  int protocol_ = 0;
  int replay_fd_ = -1;  // replay: an eventfd that never becomes readable stands in for fd()
  uint32_t seq_ = 0;
  bool joined_groups_ = false;
  SocketOptions options_;
  std::vector<std::byte> recv_buffer_;
};

}  // namespace roceqos::netlink
