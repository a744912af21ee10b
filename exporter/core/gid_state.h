#pragma once

// What the RoCE v2 GID check (exporter/sampling/gid_stage.h) publishes: each checked RDMA port's
// GID counts by type and, per selected netdev, how many of its addresses (and its VLAN uppers')
// were checked and which have no RoCE v2 GID on the netdev they are on. Plain data beside the
// snapshot that carries it, so render/ and the check subcommand read it without the stage.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "collectors/addresses.h"

namespace roceqos {

/// Why an address has no usable RoCE v2 GID.
enum class GidMissReason : uint8_t {
  kNoGid,        // no GID of the address at all: the kernel never added one
  kV1Only,       // only a RoCE v1 GID: RDMA CM over UDP (v2) cannot resolve it
  kWrongNetdev,  // a RoCE v2 GID of the address, but for another netdev (another VLAN)
};
inline constexpr EnumName<GidMissReason> kGidMissReasonNames[] = {
    {GidMissReason::kNoGid, "no_gid"},
    {GidMissReason::kV1Only, "v1_only"},
    {GidMissReason::kWrongNetdev, "wrong_netdev"},
};

inline constexpr EnumName<AddressFamily> kAddressFamilyNames[] = {
    {AddressFamily::kIpv4, "ipv4"},
    {AddressFamily::kIpv6, "ipv6"},
};

/// One address without a RoCE v2 GID on its netdev.
struct GidMiss {
  std::string netdev;   // the netdev the address is on: the checked netdev or one of its VLANs
  std::string address;  // "192.0.2.1", "fe80::1"
  AddressFamily family = AddressFamily::kIpv4;
  GidMissReason reason = GidMissReason::kNoGid;
  std::string gid_netdev;  // kWrongNetdev: the netdev the RoCE v2 GID is on

  bool operator==(const GidMiss&) const = default;
};

/// One selected netdev's check: its own addresses and its VLAN uppers', against the GID tables of
/// the RDMA ports bound to it.
struct NetdevGidCheck {
  std::array<uint32_t, 2> checked{};  // addresses checked, by AddressFamily
  std::vector<GidMiss> missing;       // in address dump order

  uint32_t Missing(AddressFamily family, GidMissReason reason) const {
    uint32_t n = 0;
    for (const GidMiss& m : missing) n += (m.family == family && m.reason == reason) ? 1 : 0;
    return n;
  }
  bool operator==(const NetdevGidCheck&) const = default;
};

/// One RDMA port's populated GID entries by type.
struct PortGidCounts {
  std::string netdev;  // the selected netdev it is bound to
  std::string device;  // "mlx5_0", "rxe0"
  uint32_t port = 0;
  uint32_t roce_v1 = 0;
  uint32_t roce_v2 = 0;

  bool operator==(const PortGidCounts&) const = default;
};

struct GidState {
  /// Every RDMA port whose GID table was read (bound to a checked netdev), in netdev order.
  std::vector<PortGidCounts> ports;
  /// netdev -> its check. A selected netdev without an RDMA port bound to it (or whose table or
  /// addresses could not be read) has no entry: nothing is known, so nothing is reported.
  std::map<std::string, NetdevGidCheck> netdevs;
  double interval_seconds = 0;  // --gids.interval
};

}  // namespace roceqos
