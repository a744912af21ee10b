#include "collectors/netlink/socket.h"

#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "base/log_event.h"
#include "collectors/capture/tape.h"

namespace roceqos::netlink {
namespace {

constexpr size_t kHeaderLen = sizeof(nlmsghdr);  // == NLMSG_HDRLEN == MNL_NLMSG_HDRLEN
constexpr size_t kMaxAttrPayload = std::numeric_limits<uint16_t>::max() - NLA_HDRLEN;

std::string ErrnoText(int errnum) { return std::strerror(errnum); }

// NLMSGERR_ATTR_*: the extended-ack TLVs after struct nlmsgerr (NLMSG_ERROR) or after the int
// error of NLMSG_DONE. Read with our own validator: they are attributes like any other.
constexpr auto kExtAckPolicy = MakePolicy<NLMSGERR_ATTR_MAX + 1>({
    {NLMSGERR_ATTR_MSG, attr::String("NLMSGERR_ATTR_MSG")},
    {NLMSGERR_ATTR_OFFS, attr::U32("NLMSGERR_ATTR_OFFS")},
    {NLMSGERR_ATTR_MISS_TYPE, attr::U32("NLMSGERR_ATTR_MISS_TYPE")},
});

/// Describes the extended ack in `tlvs`, e.g. "Unknown device (missing attribute type 3)", or
/// an empty string when there is none or it is unreadable (the errno still stands).
std::string ExtAckText(Bytes tlvs, std::string_view context) {
  Result<Attrs> ack = Attrs::Parse(tlvs, kExtAckPolicy, context);
  if (!ack) return {};
  std::string text(ack->String(NLMSGERR_ATTR_MSG).value_or(""));
  if (auto missing = ack->U32(NLMSGERR_ATTR_MISS_TYPE)) {
    text += fmt::format("{}missing attribute type {}", text.empty() ? "" : "; ", *missing);
  }
  return text;
}

Error KernelError(int errnum, std::string_view context, const std::string& extack) {
  if (extack.empty()) {
    return MakeError(errnum, fmt::format("{}: {}", context, ErrnoText(errnum)));
  }
  return MakeError(errnum, fmt::format("{}: {} ({})", context, ErrnoText(errnum), extack));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Message

Message::Message(uint16_t type, uint16_t flags) {
  buffer_.resize(MNL_ALIGN(kHeaderLen));
  nlmsghdr* nlh = mnl_nlmsg_put_header(buffer_.data());
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = static_cast<uint16_t>(flags | NLM_F_REQUEST);
}

nlmsghdr* Message::header() { return reinterpret_cast<nlmsghdr*>(buffer_.data()); }

std::span<const std::byte> Message::bytes() const {
  const auto* nlh = reinterpret_cast<const nlmsghdr*>(buffer_.data());
  return std::span<const std::byte>(buffer_.data(), nlh->nlmsg_len);
}

void Message::Reserve(size_t extra) {
  const size_t needed = header()->nlmsg_len + MNL_ALIGN(extra);
  if (buffer_.size() < needed) buffer_.resize(std::max(needed, buffer_.size() * 2));
}

void Message::PutHeader(const void* family_header, size_t len) {
  Reserve(len);
  void* dst = mnl_nlmsg_put_extra_header(header(), len);
  std::memcpy(dst, family_header, len);
}

void Message::Put(uint16_t type, const void* data, size_t len) {
  if (len > kMaxAttrPayload) {
    ok_ = false;
    return;
  }
  Reserve(MNL_ATTR_HDRLEN + len);
  static const char kNothing = 0;  // memcpy must not see a null source, even for 0 bytes
  mnl_attr_put(header(), type, len, len == 0 ? &kNothing : data);
}

void Message::PutU8(uint16_t type, uint8_t v) { Put(type, &v, sizeof(v)); }
void Message::PutU16(uint16_t type, uint16_t v) { Put(type, &v, sizeof(v)); }
void Message::PutU32(uint16_t type, uint32_t v) { Put(type, &v, sizeof(v)); }
void Message::PutU64(uint16_t type, uint64_t v) { Put(type, &v, sizeof(v)); }

void Message::PutString(uint16_t type, std::string_view s) {
  if (s.size() + 1 > kMaxAttrPayload) {
    ok_ = false;
    return;
  }
  Reserve(MNL_ATTR_HDRLEN + s.size() + 1);
  const std::string terminated(s);  // a string_view need not be NUL-terminated
  mnl_attr_put_strz(header(), type, terminated.c_str());
}

size_t Message::BeginNest(uint16_t type) {
  Reserve(MNL_ATTR_HDRLEN);
  const size_t offset = header()->nlmsg_len;
  mnl_attr_nest_start(header(), type);
  return offset;
}

void Message::EndNest(size_t token) {
  const size_t nest_len = header()->nlmsg_len - token;
  if (nest_len > std::numeric_limits<uint16_t>::max()) {
    ok_ = false;
    return;
  }
  mnl_attr_nest_end(header(), reinterpret_cast<nlattr*>(buffer_.data() + token));
}

// ---------------------------------------------------------------------------------------------
// Parsing received messages

Result<void> ForEachMessage(Bytes datagram, std::string_view context,
                            const std::function<Result<void>(const NlMessage&)>& fn) {
  size_t offset = 0;
  while (offset < datagram.size()) {
    const size_t left = datagram.size() - offset;
    NlMessage msg;
    if (left < kHeaderLen) {
      return MakeError(0, fmt::format("{}: truncated netlink header at offset {} ({} byte(s))",
                                      context, offset, left));
    }
    std::memcpy(&msg.header, datagram.data() + offset, kHeaderLen);
    if (msg.header.nlmsg_len < kHeaderLen || msg.header.nlmsg_len > left) {
      return MakeError(0, fmt::format("{}: nlmsg_len {} at offset {} does not fit the {} byte(s) "
                                      "left",
                                      context, msg.header.nlmsg_len, offset, left));
    }
    msg.body = datagram.subspan(offset + kHeaderLen, msg.header.nlmsg_len - kHeaderLen);
    Result<void> step = fn(msg);
    if (!step) return step;
    offset += NLMSG_ALIGN(msg.header.nlmsg_len);
  }
  return {};
}

Result<Bytes> Payload(const NlMessage& msg, size_t family_header_len, std::string_view context) {
  if (msg.body.size() < family_header_len) {
    return MakeError(0, fmt::format("{}: message of {} byte(s) is shorter than its {}-byte "
                                    "family header",
                                    context, msg.body.size(), family_header_len));
  }
  // Attributes start at the aligned end of the family header (NLMSG_ALIGN, as nlmsg_attrdata).
  const size_t start = std::min(msg.body.size(), size_t{NLMSG_ALIGN(family_header_len)});
  return msg.body.subspan(start);
}

Result<void> ParseErrorMessage(const NlMessage& msg, std::string_view context) {
  nlmsgerr err;
  if (msg.body.size() < sizeof(err)) {
    return MakeError(EPROTO, fmt::format("{}: NLMSG_ERROR of {} byte(s) is shorter than struct "
                                         "nlmsgerr",
                                         context, msg.body.size()));
  }
  std::memcpy(&err, msg.body.data(), sizeof(err));
  if (err.error > 0 || err.error == std::numeric_limits<int>::min()) {
    return MakeError(EPROTO,
                     fmt::format("{}: NLMSG_ERROR with invalid error {}", context, err.error));
  }
  std::string extack;
  if (msg.header.nlmsg_flags & NLM_F_ACK_TLVS) {
    // Without NLM_F_CAPPED the kernel echoed the whole request before the TLVs.
    size_t tlv_offset = sizeof(err);
    if (!(msg.header.nlmsg_flags & NLM_F_CAPPED) && err.msg.nlmsg_len > kHeaderLen) {
      tlv_offset += NLMSG_ALIGN(err.msg.nlmsg_len - kHeaderLen);
    }
    if (tlv_offset <= msg.body.size()) extack = ExtAckText(msg.body.subspan(tlv_offset), context);
  }
  if (err.error == 0) {
    if (!extack.empty())
      LogEvent(spdlog::level::debug, "netlink: kernel warning",
               {{"request", context}, {"extack", extack}});
    return {};
  }
  return KernelError(-err.error, context, extack);
}

Result<void> ParseDoneMessage(const NlMessage& msg, std::string_view context) {
  int error = 0;
  if (msg.body.size() >= sizeof(error)) std::memcpy(&error, msg.body.data(), sizeof(error));
  if (error >= 0) return {};
  if (error == std::numeric_limits<int>::min()) {
    return MakeError(EPROTO, fmt::format("{}: NLMSG_DONE with invalid error", context));
  }
  std::string extack;
  if ((msg.header.nlmsg_flags & NLM_F_ACK_TLVS) && msg.body.size() >= sizeof(error)) {
    extack = ExtAckText(msg.body.subspan(NLMSG_ALIGN(sizeof(error))), context);
  }
  return KernelError(-error, context, extack);
}

ReplyReader::ReplyReader(uint32_t seq, uint32_t port_id, uint16_t request_flags,
                         std::string_view context)
    : seq_(seq), port_id_(port_id), request_flags_(request_flags), context_(context) {}

Result<void> ReplyReader::Check(const NlMessage& msg, const ReplyHandler& on_reply) {
  const bool dump = (request_flags_ & NLM_F_DUMP) == NLM_F_DUMP;
  const bool ack = (request_flags_ & NLM_F_ACK) != 0;
  if (msg.header.nlmsg_pid != port_id_) {
    return MakeError(EPROTO, fmt::format("{}: reply for port id {}, this socket is {}", context_,
                                         msg.header.nlmsg_pid, port_id_));
  }
  if (msg.header.nlmsg_seq != seq_) {
    // Serial-number arithmetic: "older" survives the wrap of the 32-bit counter.
    const auto age = static_cast<int32_t>(seq_ - msg.header.nlmsg_seq);
    if (age > 0 && msg.header.nlmsg_seq != 0) {
      ++stale_;
      return {};
    }
    return MakeError(EPROTO, fmt::format("{}: reply with sequence {}, expected {}", context_,
                                         msg.header.nlmsg_seq, seq_));
  }
  if (complete_) {
    return MakeError(EPROTO, fmt::format("{}: message type {} after the end of the exchange",
                                         context_, msg.header.nlmsg_type));
  }
  if (msg.header.nlmsg_flags & NLM_F_DUMP_INTR) interrupted_ = true;
  switch (msg.header.nlmsg_type) {
    case NLMSG_NOOP:
      return {};
    case NLMSG_OVERRUN:
      return MakeError(EPROTO, context_ + ": NLMSG_OVERRUN");
    case NLMSG_ERROR:
      complete_ = true;
      return ParseErrorMessage(msg, context_);
    case NLMSG_DONE: {
      complete_ = true;
      Result<void> status = ParseDoneMessage(msg, context_);
      if (status && interrupted_) {
        return MakeError(EINTR, context_ +
                                    ": dump interrupted by a concurrent change "
                                    "(NLM_F_DUMP_INTR); retry");
      }
      return status;
    }
    default:
      break;
  }
  if (!dump && !ack && !(msg.header.nlmsg_flags & NLM_F_MULTI)) complete_ = true;
  if (failed_) return {};  // draining: the handler already failed once
  return on_reply(msg);
}

Result<bool> ReplyReader::Feed(Bytes datagram, const ReplyHandler& on_reply) {
  Result<void> walked = ForEachMessage(datagram, context_, [&](const NlMessage& msg) {
    Result<void> checked = Check(msg, on_reply);
    if (!checked && !failed_) {
      failed_ = true;
      error_ = checked.error();
    }
    return Result<void>();
  });
  if (!walked && !failed_) {
    failed_ = true;
    error_ = walked.error();
  }
  if (failed_) return error_;
  return complete_;
}

// ---------------------------------------------------------------------------------------------
// Socket

Result<Socket> Socket::Open(int protocol, const SocketOptions& options) {
  if (tape::Replaying()) {
    // A socket the recorded kernel refused (no RDMA netlink) is refused again.
    std::optional<tape::NetlinkExchange> refused = tape::ReplayNetlink(protocol, {});
    if (refused && refused->errnum != 0) {
      return MakeError(refused->errnum,
                       fmt::format("socket(AF_NETLINK, protocol {}): {} (replayed)", protocol,
                                   ErrnoText(refused->errnum)));
    }
    // No kernel socket: requests come from the bundle, and monitors poll an fd that stays quiet.
    Socket socket(nullptr, options);
    socket.protocol_ = protocol;
    socket.replay_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (socket.replay_fd_ < 0) {
      const int errnum = errno;
      return MakeError(errnum, fmt::format("eventfd (replay): {}", ErrnoText(errnum)));
    }
    return socket;
  }
  mnl_socket* sock = mnl_socket_open2(protocol, SOCK_CLOEXEC);
  if (sock == nullptr) {
    const int errnum = errno;
    tape::RecordNetlink({protocol, 0, 0, errnum, {}, {}});  // an empty request: the open failed
    return MakeError(
        errnum, fmt::format("socket(AF_NETLINK, protocol {}): {}", protocol, ErrnoText(errnum)));
  }
  Socket socket(sock, options);  // owns sock from here on
  socket.protocol_ = protocol;
  if (mnl_socket_bind(sock, 0, MNL_SOCKET_AUTOPID) < 0) {
    const int errnum = errno;
    return MakeError(errnum,
                     fmt::format("bind(netlink protocol {}): {}", protocol, ErrnoText(errnum)));
  }
  int on = 1;
  // Both are best effort: kernels before 4.12 lack extended acks, and requests work without.
  mnl_socket_setsockopt(sock, NETLINK_EXT_ACK, &on, sizeof(on));
  mnl_socket_setsockopt(sock, NETLINK_CAP_ACK, &on, sizeof(on));
  if (options.strict_checking &&
      mnl_socket_setsockopt(sock, NETLINK_GET_STRICT_CHK, &on, sizeof(on)) < 0) {
    const int errnum = errno;
    return MakeError(errnum,
                     fmt::format("setsockopt(NETLINK_GET_STRICT_CHK): {}", ErrnoText(errnum)));
  }
  const auto usec =
      std::chrono::duration_cast<std::chrono::microseconds>(options.receive_timeout).count();
  timeval timeout{.tv_sec = static_cast<time_t>(usec / 1000000),
                  .tv_usec = static_cast<suseconds_t>(usec % 1000000)};
  if (setsockopt(socket.fd(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) < 0) {
    const int errnum = errno;
    return MakeError(errnum, fmt::format("setsockopt(SO_RCVTIMEO): {}", ErrnoText(errnum)));
  }
  if (options.kernel_receive_buffer > 0 &&
      setsockopt(socket.fd(), SOL_SOCKET, SO_RCVBUF, &options.kernel_receive_buffer,
                 sizeof(options.kernel_receive_buffer)) < 0) {
    const int errnum = errno;
    return MakeError(errnum, fmt::format("setsockopt(SO_RCVBUF): {}", ErrnoText(errnum)));
  }
  return socket;
}

Socket::Socket(mnl_socket* sock, const SocketOptions& options)
    : sock_(sock),
      options_(options),
      recv_buffer_(std::max(options.receive_buffer_bytes, sizeof(nlmsghdr))) {}

Socket::Socket(Socket&& other) noexcept
    : sock_(std::exchange(other.sock_, nullptr)),
      protocol_(other.protocol_),
      replay_fd_(std::exchange(other.replay_fd_, -1)),
      seq_(other.seq_),
      joined_groups_(other.joined_groups_),
      options_(other.options_),
      recv_buffer_(std::move(other.recv_buffer_)) {}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (sock_ != nullptr) mnl_socket_close(sock_);
    if (replay_fd_ >= 0) close(replay_fd_);
    sock_ = std::exchange(other.sock_, nullptr);
    protocol_ = other.protocol_;
    replay_fd_ = std::exchange(other.replay_fd_, -1);
    seq_ = other.seq_;
    joined_groups_ = other.joined_groups_;
    options_ = other.options_;
    recv_buffer_ = std::move(other.recv_buffer_);
  }
  return *this;
}

Socket::~Socket() {
  if (sock_ != nullptr) mnl_socket_close(sock_);
  if (replay_fd_ >= 0) close(replay_fd_);
}

int Socket::fd() const { return sock_ == nullptr ? replay_fd_ : mnl_socket_get_fd(sock_); }
uint32_t Socket::port_id() const { return sock_ == nullptr ? 0 : mnl_socket_get_portid(sock_); }

Result<Bytes> Socket::Receive(bool blocking, std::string_view context) {
  while (true) {
    sockaddr_nl from{};
    iovec iov{recv_buffer_.data(), recv_buffer_.size()};
    msghdr mh{};
    mh.msg_name = &from;
    mh.msg_namelen = sizeof(from);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    // libmnl's mnl_socket_recvfrom does not expose the sender, and a datagram from another
    // user-space process with our port id must not be taken for the kernel's reply.
    const ssize_t n = recvmsg(fd(), &mh, blocking ? 0 : MSG_DONTWAIT);
    if (n < 0) {
      const int errnum = errno;
      if (errnum == EINTR) continue;
      if (errnum == EAGAIN || errnum == EWOULDBLOCK) {
        if (!blocking) return Bytes{};
        return MakeError(ETIMEDOUT, fmt::format("{}: no reply within {} ms", context,
                                                options_.receive_timeout.count()));
      }
      if (errnum == ENOBUFS) {
        return MakeError(ENOBUFS, fmt::format("{}: socket receive buffer overrun, messages were "
                                              "lost",
                                              context));
      }
      return MakeError(errnum, fmt::format("{}: recvmsg: {}", context, ErrnoText(errnum)));
    }
    if (mh.msg_flags & MSG_TRUNC) {
      return MakeError(EMSGSIZE, fmt::format("{}: datagram larger than the {}-byte receive "
                                             "buffer (MSG_TRUNC)",
                                             context, recv_buffer_.size()));
    }
    if (mh.msg_namelen != sizeof(from) || from.nl_family != AF_NETLINK || from.nl_pid != 0) {
      LogEvent(spdlog::level::debug, "netlink: dropped a datagram not from the kernel",
               {{"request", context}, {"port_id", from.nl_pid}});
      continue;
    }
    return Bytes(recv_buffer_.data(), static_cast<size_t>(n));
  }
}

Result<void> Socket::Request(Message& request, const ReplyHandler& on_reply,
                             std::string_view context) {
  if (joined_groups_) {
    return MakeError(EINVAL,
                     fmt::format("{}: requests on a monitoring socket are not supported", context));
  }
  if (!request.ok()) {
    return MakeError(EMSGSIZE, fmt::format("{}: request attributes exceed netlink's 64 KiB "
                                           "attribute limit",
                                           context));
  }
  if (++seq_ == 0) ++seq_;  // 0 is what notifications carry
  nlmsghdr* nlh = request.header();
  nlh->nlmsg_seq = seq_;
  nlh->nlmsg_pid = 0;  // addressed to the kernel
  if (sock_ == nullptr) return ReplayRequest(request, on_reply, context);
  if (!tape::Recording()) return Exchange(request, on_reply, context, nullptr);
  std::vector<std::vector<std::byte>> replies;
  Result<void> done = Exchange(request, on_reply, context, &replies);
  Bytes sent = request.bytes();
  // A transport failure (timeout, sendto) has no datagram that says so: its errno is recorded.
  const bool transport_error = !done && replies.empty();
  tape::RecordNetlink({protocol_, seq_, port_id(), transport_error ? done.error().errnum : 0,
                       tape::Blob(sent.begin(), sent.end()), std::move(replies)});
  return done;
}

Result<void> Socket::ReplayRequest(Message& request, const ReplyHandler& on_reply,
                                   std::string_view context) {
  Bytes sent = request.bytes();
  std::optional<tape::NetlinkExchange> recorded =
      tape::ReplayNetlink(protocol_, tape::Blob(sent.begin(), sent.end()));
  if (!recorded) {
    return MakeError(ENODATA, fmt::format("{}: replay: the capture has no such request", context));
  }
  if (recorded->errnum != 0) {
    return MakeError(recorded->errnum,
                     fmt::format("{}: {} (replayed)", context, ErrnoText(recorded->errnum)));
  }
  ReplyReader reader(recorded->seq, recorded->port_id, request.header()->nlmsg_flags, context);
  for (const tape::Blob& datagram : recorded->replies) {
    Result<bool> done = reader.Feed(datagram, on_reply);
    if (!done) return done.error();
    if (*done) return {};
  }
  return MakeError(ETIMEDOUT,
                   fmt::format("{}: replay: the capture ends before the exchange does", context));
}

Result<void> Socket::Exchange(Message& request, const ReplyHandler& on_reply,
                              std::string_view context,
                              std::vector<std::vector<std::byte>>* recorded) {
  Bytes out = request.bytes();
  const ssize_t sent = mnl_socket_sendto(sock_, out.data(), out.size());
  if (sent < 0) {
    const int errnum = errno;
    return MakeError(errnum, fmt::format("{}: sendto: {}", context, ErrnoText(errnum)));
  }
  if (static_cast<size_t>(sent) != out.size()) {
    return MakeError(EIO,
                     fmt::format("{}: short send ({} of {} bytes)", context, sent, out.size()));
  }
  ReplyReader reader(seq_, port_id(), request.header()->nlmsg_flags, context);
  auto receive = [&]() {
    Result<Bytes> datagram = Receive(/*blocking=*/true, context);
    if (datagram && recorded != nullptr) recorded->emplace_back(datagram->begin(), datagram->end());
    return datagram;
  };
  while (true) {
    Result<Bytes> datagram = receive();
    if (!datagram) return datagram.error();
    Result<bool> done = reader.Feed(*datagram, on_reply);
    if (done && *done) return {};
    if (!done) {
      // Read the exchange to its end so the socket is ready for the next request (a dump left
      // running makes the kernel answer the next one with EBUSY). Bounded by the timeout.
      while (!reader.complete()) {
        Result<Bytes> rest = receive();
        if (!rest) break;
        (void)reader.Feed(*rest, on_reply);
      }
      return done.error();
    }
  }
}

Result<void> Socket::JoinGroup(unsigned group) {
  if (sock_ == nullptr) {  // replay: no notifications ever arrive
    joined_groups_ = true;
    return {};
  }
  int value = static_cast<int>(group);
  if (mnl_socket_setsockopt(sock_, NETLINK_ADD_MEMBERSHIP, &value, sizeof(value)) < 0) {
    const int errnum = errno;
    return MakeError(
        errnum, fmt::format("joining netlink multicast group {}: {}", group, ErrnoText(errnum)));
  }
  joined_groups_ = true;
  return {};
}

Result<size_t> Socket::ReadNotifications(const ReplyHandler& on_message, size_t max_datagrams) {
  size_t dispatched = 0;
  if (sock_ == nullptr) return dispatched;  // replay
  for (size_t read = 0; read < max_datagrams; ++read) {
    Result<Bytes> datagram = Receive(/*blocking=*/false, "netlink notifications");
    if (!datagram) return datagram.error();
    if (datagram->empty()) return dispatched;
    Result<void> walked =
        ForEachMessage(*datagram, "netlink notification", [&](const NlMessage& msg) {
          if (msg.header.nlmsg_type < NLMSG_MIN_TYPE) return Result<void>();  // NOOP/DONE/...
          ++dispatched;
          return on_message(msg);
        });
    if (!walked) return walked.error();
  }
  return dispatched;
}

}  // namespace roceqos::netlink
