#pragma once

// --web.listen-address, `[host]:port` as Prometheus exporters take it, to the socket address the
// server binds.

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace roceqos {

struct ListenAddress {
  /// AF_INET or AF_INET6; AF_UNSPEC for ":port", every interface (see `dual_stack`).
  int family = AF_UNSPEC;
  std::string host;  // numeric, without brackets; "" for ":port"
  uint16_t port = 0;
  /// An IPv6 socket on the unspecified address that takes IPv4 too (IPV6_V6ONLY off): ":port"
  /// and "[::]:port", as Go's net.Listen binds them (node_exporter, Prometheus).
  bool dual_stack = false;
};

/// ":9879" (every interface, IPv6 and IPv4; IPv4 alone where the kernel has no IPv6),
/// "127.0.0.1:9879", "0.0.0.0:9879" (every IPv4 interface), "[::1]:9879", "[::]:9879",
/// "localhost:9879" (127.0.0.1). Host names other than localhost are refused: the address is
/// bound once at start, and a name that resolves differently later would mislead.
Result<ListenAddress> ParseListenAddress(std::string_view text);

/// The address as --web.listen-address would write it ("[::1]:9879", ":9879").
std::string FormatListenAddress(const ListenAddress& address);

}  // namespace roceqos
