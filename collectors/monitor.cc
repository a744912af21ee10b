#include "collectors/monitor.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace roceqos {
namespace {

constexpr auto kDcbPolicy = netlink::MakePolicy<DCB_ATTR_MAX + 1>({
    {DCB_ATTR_IFNAME, netlink::attr::Required(netlink::attr::String("DCB_ATTR_IFNAME", IFNAMSIZ))},
});

constexpr auto kLinkEventPolicy = netlink::MakePolicy<IFLA_MTU + 1>({
    {IFLA_IFNAME, netlink::attr::Required(netlink::attr::String("IFLA_IFNAME", IFNAMSIZ))},
    {IFLA_MTU, netlink::attr::U32("IFLA_MTU")},
});

}  // namespace

Result<std::optional<ChangeEvent>> ParseChangeNotification(
    const netlink::NlMessage& message, std::chrono::steady_clock::time_point received) {
  const uint16_t type = message.header.nlmsg_type;
  ChangeEvent event;
  event.received = received;
  if (type == RTM_SETDCB || type == RTM_GETDCB) {
    // dcbnl_ieee_notify: struct dcbmsg, then DCB_ATTR_IFNAME and the full IEEE state (which we
    // do not trust as the reading: the re-read goes through the same path as polling).
    auto payload = netlink::Payload(message, sizeof(dcbmsg), "RTNLGRP_DCB notification");
    if (!payload) return payload.error();
    auto attrs = netlink::Attrs::Parse(*payload, kDcbPolicy, "RTNLGRP_DCB notification");
    if (!attrs) return attrs.error();
    event.kind = ChangeEvent::Kind::kDcb;
    event.netdev = std::string(*attrs->String(DCB_ATTR_IFNAME));
    return std::optional(std::move(event));
  }
  if (type == RTM_NEWLINK || type == RTM_DELLINK) {
    auto header = netlink::FamilyHeader<ifinfomsg>(message, "RTNLGRP_LINK notification");
    if (!header) return header.error();
    auto payload = netlink::Payload(message, sizeof(ifinfomsg), "RTNLGRP_LINK notification");
    if (!payload) return payload.error();
    auto attrs = netlink::Attrs::Parse(*payload, kLinkEventPolicy, "RTNLGRP_LINK notification");
    if (!attrs) return attrs.error();
    event.kind = type == RTM_NEWLINK ? ChangeEvent::Kind::kLink : ChangeEvent::Kind::kLinkRemoved;
    event.netdev = std::string(*attrs->String(IFLA_IFNAME));
    event.ifindex = header->ifi_index;
    event.mtu = attrs->U32(IFLA_MTU);
    return std::optional(std::move(event));
  }
  return std::optional<ChangeEvent>();
}

ChangeMonitor::ChangeMonitor(netlink::Socket socket, int wake_fd)
    : socket_(std::move(socket)), wake_fd_(wake_fd) {}

ChangeMonitor::~ChangeMonitor() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Result<std::unique_ptr<ChangeMonitor>> ChangeMonitor::Open() {
  netlink::SocketOptions options;
  options.kernel_receive_buffer = 1 << 20;  // a pfc_en change flaps the link: bursts of events
  auto socket = netlink::Socket::Open(NETLINK_ROUTE, options);
  if (!socket) return socket.error();
  for (unsigned group : {unsigned{RTNLGRP_DCB}, unsigned{RTNLGRP_LINK}}) {
    auto joined = socket->JoinGroup(group);
    if (!joined) return joined.error();
  }
  int wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake < 0) return MakeError(errno, fmt::format("eventfd: {}", std::strerror(errno)));
  return std::unique_ptr<ChangeMonitor>(new ChangeMonitor(std::move(*socket), wake));
}

void ChangeMonitor::Interrupt() {
  uint64_t one = 1;
  // A full counter (EAGAIN) already means "interrupted": nothing to do.
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

Result<std::vector<ChangeEvent>> ChangeMonitor::Wait(std::chrono::milliseconds timeout) {
  std::vector<ChangeEvent> events;
  pollfd fds[2] = {{socket_.fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  int ready = ::poll(fds, 2, static_cast<int>(timeout.count()));
  if (ready < 0) {
    if (errno == EINTR) return events;
    return MakeError(errno, fmt::format("poll on the change monitor: {}", std::strerror(errno)));
  }
  const auto received = std::chrono::steady_clock::now();
  if (fds[1].revents & POLLIN) {
    uint64_t count = 0;
    [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof count);
  }
  if (!(fds[0].revents & POLLIN)) return events;
  uint64_t malformed_now = 0;
  auto read = socket_.ReadNotifications(
      [&](const netlink::NlMessage& message) -> Result<void> {
        auto event = ParseChangeNotification(message, received);
        if (!event) {
          ++malformed_now;  // one bad message must not hide the others in the datagram
          return {};
        }
        if (*event) events.push_back(std::move(**event));
        return {};
      },
      kMaxDatagramsPerWait);
  malformed_ += malformed_now;
  if (auto reason = ResyncReasonFor(read, malformed_now)) {
    ChangeEvent resync;
    resync.kind = ChangeEvent::Kind::kResync;
    resync.resync_reason = *reason;
    resync.received = received;
    events.push_back(std::move(resync));
  }
  return events;
}

std::optional<ChangeEvent::ResyncReason> ResyncReasonFor(const Result<size_t>& read,
                                                         uint64_t malformed_messages) {
  if (!read) {
    return read.error().errnum == ENOBUFS ? ChangeEvent::ResyncReason::kOverflow
                                          : ChangeEvent::ResyncReason::kReadError;
  }
  if (malformed_messages > 0) return ChangeEvent::ResyncReason::kMalformed;
  return std::nullopt;
}

}  // namespace roceqos
