#pragma once

// The IPv4 and IPv6 addresses of every netdev in the exporter's network namespace: one
// RTM_GETADDR dump (AF_UNSPEC: both families) over rtnetlink. The RoCE v2 GID check
// (exporter/sampling/gid_check.h) compares them with the RDMA ports' GID tables
// (collectors/roce_gids.h): the kernel's roce_gid_mgmt adds one GID per address of a port's
// netdev and of its upper devices, so an address without one is an address RDMA CM cannot use.
//
// The reply, per address (linux/if_addr.h, linux/rtnetlink.h):
//   struct ifaddrmsg  ifa_family (AF_INET, AF_INET6), ifa_prefixlen, ifa_flags (u8), ifa_index
//   IFA_LOCAL         the local address on a point-to-point link (IPv4 always sends it)
//   IFA_ADDRESS       the local address otherwise (the peer's on a point-to-point link)
//   IFA_FLAGS         u32, supersedes ifa_flags when present (IFA_F_TENTATIVE, IFA_F_DADFAILED,
//   ...)
// The kernel facts: docs/kernel-interfaces.md §12.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/netlink/attr.h"

namespace roceqos {

enum class AddressFamily : uint8_t { kIpv4, kIpv6 };

struct IfAddress {
  int32_t ifindex = 0;  // ifaddrmsg.ifa_index
  AddressFamily family = AddressFamily::kIpv4;
  std::array<uint8_t, 16> bytes{};  // network order; IPv4 in the first 4
  uint8_t prefix_len = 0;           // ifaddrmsg.ifa_prefixlen
  uint32_t flags = 0;               // IFA_FLAGS, else ifaddrmsg.ifa_flags

  bool operator==(const IfAddress&) const = default;
};

/// One RTM_NEWADDR message body (after the nlmsghdr). nullopt for a family other than AF_INET or
/// AF_INET6 (none today, but the dump is AF_UNSPEC) and for a message without an address; an
/// Error when the header or an attribute is malformed.
Result<std::optional<IfAddress>> ParseAddrReply(netlink::Bytes body);

/// "192.0.2.1", "fe80::1" (inet_ntop).
std::string AddressText(const IfAddress& address);

/// The RoCE GID the kernel makes of this address, spelled as sysfs gids/<i> prints it ("%pI6",
/// eight groups of four lower-case hex digits): an IPv4 address as its IPv4-mapped IPv6 address
/// ::ffff:a.b.c.d (rdma_ip2gid), an IPv6 address as itself.
std::string GidTextOf(const IfAddress& address);

/// Whether the kernel can have made a GID of the address yet: not while IPv6 duplicate address
/// detection runs (IFA_F_TENTATIVE) or after it failed (IFA_F_DADFAILED). A deprecated address
/// (IFA_F_DEPRECATED) is still the netdev's and keeps its GID, so it is checked.
bool AddressSettled(const IfAddress& address);

/// The RTM_GETADDR dump on its own NETLINK_ROUTE socket (opened once, kept).
class AddressCollector {
 public:
  static Result<std::unique_ptr<AddressCollector>> Open();
  ~AddressCollector();
  AddressCollector(const AddressCollector&) = delete;
  AddressCollector& operator=(const AddressCollector&) = delete;

  /// Every address of every netdev, in the kernel's order. Retried once when the dump was
  /// interrupted (NLM_F_DUMP_INTR: an address changed during it).
  Result<std::vector<IfAddress>> Dump();

 private:
  struct Impl;
  explicit AddressCollector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace roceqos
