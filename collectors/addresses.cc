#include "collectors/addresses.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "collectors/netlink/socket.h"

namespace roceqos {
namespace {

using netlink::Attrs;

constexpr uint16_t kIpv4Len = 4;
constexpr uint16_t kIpv6Len = 16;
constexpr int kAddressDumpAttempts = 2;

constexpr auto kAddrPolicy = netlink::MakePolicy<IFA_MAX + 1>({
    {IFA_ADDRESS, netlink::attr::Binary("IFA_ADDRESS", kIpv4Len, kIpv6Len)},
    {IFA_LOCAL, netlink::attr::Binary("IFA_LOCAL", kIpv4Len, kIpv6Len)},
    {IFA_FLAGS, netlink::attr::U32("IFA_FLAGS")},
});

}  // namespace

Result<std::optional<IfAddress>> ParseAddrReply(netlink::Bytes body) {
  constexpr std::string_view kContext = "RTM_NEWADDR";
  ifaddrmsg header;
  if (body.size() < sizeof(header))
    return MakeError(
        0, fmt::format("{}: {} byte(s) is shorter than struct ifaddrmsg", kContext, body.size()));
  std::memcpy(&header, body.data(), sizeof(header));
  if (header.ifa_family != AF_INET && header.ifa_family != AF_INET6)
    return std::optional<IfAddress>();
  Result<Attrs> attrs =
      Attrs::Parse(body.subspan(NLMSG_ALIGN(sizeof(header))), kAddrPolicy, kContext);
  if (!attrs) return attrs.error();
  IfAddress address;
  address.ifindex = static_cast<int32_t>(header.ifa_index);
  address.family = header.ifa_family == AF_INET ? AddressFamily::kIpv4 : AddressFamily::kIpv6;
  address.prefix_len = header.ifa_prefixlen;
  // IFA_FLAGS (u32) carries the flags above bit 7 and, when present, replaces ifa_flags.
  address.flags = attrs->U32(IFA_FLAGS).value_or(header.ifa_flags);
  // IFA_LOCAL is the local address where it differs from IFA_ADDRESS (point-to-point); IPv4
  // always sends both, IPv6 IFA_LOCAL only with a peer (linux/if_addr.h).
  netlink::Bytes raw = attrs->Raw(IFA_LOCAL);
  if (raw.empty()) raw = attrs->Raw(IFA_ADDRESS);
  if (raw.empty()) return std::optional<IfAddress>();
  const size_t want = address.family == AddressFamily::kIpv4 ? kIpv4Len : kIpv6Len;
  if (raw.size() != want)
    return MakeError(0, fmt::format("{} ifindex {}: a {}-byte address in a family of {}-byte ones",
                                    kContext, address.ifindex, raw.size(), want));
  std::memcpy(address.bytes.data(), raw.data(), want);
  return std::optional<IfAddress>(address);
}

std::string AddressText(const IfAddress& address) {
  char text[INET6_ADDRSTRLEN] = {};
  const int af = address.family == AddressFamily::kIpv4 ? AF_INET : AF_INET6;
  if (inet_ntop(af, address.bytes.data(), text, sizeof(text)) == nullptr) return "?";
  return text;
}

std::string GidTextOf(const IfAddress& address) {
  std::array<uint8_t, 16> gid{};
  if (address.family == AddressFamily::kIpv4) {
    gid[10] = 0xff;  // ::ffff:a.b.c.d, the IPv4-mapped IPv6 address (ipv6_addr_set_v4mapped)
    gid[11] = 0xff;
    std::memcpy(&gid[12], address.bytes.data(), kIpv4Len);
  } else {
    gid = address.bytes;
  }
  std::string text;
  for (size_t i = 0; i < gid.size(); i += 2)
    text += fmt::format("{}{:02x}{:02x}", i ? ":" : "", gid[i], gid[i + 1]);
  return text;
}

bool AddressSettled(const IfAddress& address) {
  return (address.flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED)) == 0;
}

struct AddressCollector::Impl {
  netlink::Socket route;
};

AddressCollector::AddressCollector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AddressCollector::~AddressCollector() = default;

Result<std::unique_ptr<AddressCollector>> AddressCollector::Open() {
  Result<netlink::Socket> route = netlink::Socket::Open(NETLINK_ROUTE);
  if (!route) return route.error();
  return std::unique_ptr<AddressCollector>(
      new AddressCollector(std::make_unique<Impl>(Impl{std::move(*route)})));
}

Result<std::vector<IfAddress>> AddressCollector::Dump() {
  Result<void> status;
  std::vector<IfAddress> addresses;
  for (int attempt = 0; attempt < kAddressDumpAttempts; ++attempt) {
    addresses.clear();
    netlink::Message request(RTM_GETADDR, NLM_F_DUMP);
    ifaddrmsg header{};
    header.ifa_family = AF_UNSPEC;  // both families in one dump
    request.PutHeader(&header, sizeof(header));
    status = impl_->route.Request(
        request,
        [&](const netlink::NlMessage& reply) -> Result<void> {
          if (reply.header.nlmsg_type != RTM_NEWADDR) return {};
          Result<std::optional<IfAddress>> address = ParseAddrReply(reply.body);
          if (!address) return address.error();
          if (*address) addresses.push_back(**address);
          return {};
        },
        "RTM_GETADDR dump");
    if (status || status.error().errnum != EINTR) break;
  }
  if (!status) return status.error();
  return addresses;
}

}  // namespace roceqos
