#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"

namespace roceqos {

/// IFLA_OPERSTATE: enum IF_OPER_* of linux/if.h, with the kernel's values (discovery.cc checks).
enum class OperState : uint8_t {
  kUnknown = 0,
  kNotPresent = 1,
  kDown = 2,
  kLowerLayerDown = 3,
  kTesting = 4,
  kDormant = 5,
  kUp = 6,
};

/// Spelled as `ip link` prints them (the oper_state label of roce_netdev_info).
inline constexpr EnumName<OperState> kOperStateNames[] = {
    {OperState::kUnknown, "unknown"}, {OperState::kNotPresent, "notpresent"},
    {OperState::kDown, "down"},       {OperState::kLowerLayerDown, "lowerlayerdown"},
    {OperState::kTesting, "testing"}, {OperState::kDormant, "dormant"},
    {OperState::kUp, "up"},
};

/// A value outside the table (a newer kernel's) reads as "unknown".
constexpr std::string_view OperStateName(OperState state) { return NameOf(kOperStateNames, state); }

/// How a netdev relates to the hardware; remediation and selection depend on it.
enum class DeviceRole { kPf, kVf, kBond, kBondMember, kOther };

inline constexpr EnumName<DeviceRole> kDeviceRoleNames[] = {
    {DeviceRole::kPf, "pf"},       {DeviceRole::kVf, "vf"},
    {DeviceRole::kBond, "bond"},   {DeviceRole::kBondMember, "bond_member"},
    {DeviceRole::kOther, "other"},
};
std::string_view DeviceRoleName(DeviceRole role);

/// One port of an RDMA device and the netdev it is bound to (the `ibdev2netdev` relation).
struct RdmaPort {
  std::string device;         // RDMA_NLDEV_ATTR_DEV_NAME, e.g. "mlx5_0", "mlx5_bond_0", "rxe0"
  uint32_t device_index = 0;  // RDMA_NLDEV_ATTR_DEV_INDEX
  uint32_t port = 0;          // RDMA_NLDEV_ATTR_PORT_INDEX (1-based)
  uint8_t port_state = 0;     // RDMA_NLDEV_ATTR_PORT_STATE (IB_PORT_ACTIVE = 4)
  uint8_t phys_state = 0;     // RDMA_NLDEV_ATTR_PORT_PHYS_STATE (LINK_UP = 5)
  std::string netdev;         // RDMA_NLDEV_ATTR_NDEV_NAME; empty when not in our netns
  int32_t netdev_index = 0;   // RDMA_NLDEV_ATTR_NDEV_INDEX
  std::string protocol;       // RDMA_NLDEV_ATTR_DEV_PROTOCOL ("roce", "ib", ...) when present

  bool operator==(const RdmaPort&) const = default;
};

/// A network interface as discovery sees it. Plain value type: tests build it by hand.
struct Device {
  int32_t ifindex = 0;                         // ifinfomsg.ifi_index
  std::string name;                            // IFLA_IFNAME
  OperState oper_state = OperState::kUnknown;  // IFLA_OPERSTATE
  bool admin_up = false;                       // ifinfomsg.ifi_flags & IFF_UP
  bool carrier = false;                        // ifinfomsg.ifi_flags & IFF_LOWER_UP
  uint32_t mtu = 0;                            // IFLA_MTU
  /// IFLA_CARRIER_CHANGES: carrier up/down transitions since the netdev was created (2.6.37+).
  std::optional<uint32_t> carrier_changes;
  int32_t master_ifindex = 0;  // IFLA_MASTER (0 = none)
  /// IFLA_LINK: the lower device of a VLAN (or a veth's peer); 0 when none, or when it is in
  /// another netns (IFLA_LINK_NETNSID present).
  int32_t link_ifindex = 0;
  /// The VLAN netdevs (IFLA_INFO_KIND "vlan") whose frames leave tagged through this netdev:
  /// those whose IFLA_LINK is this netdev and, on a bond member, those on its bond. Resolved from
  /// the same dump, so only VLANs in this netns.
  std::vector<std::string> vlan_uppers;
  std::string master;       // name of IFLA_MASTER, resolved from the same dump
  std::string kind;         // IFLA_LINKINFO/IFLA_INFO_KIND ("bond", "veth", ... or empty)
  std::string slave_kind;   // IFLA_LINKINFO/IFLA_INFO_SLAVE_KIND ("bond" on bond members)
  std::string driver;       // ETHTOOL_GDRVINFO driver ("mlx5_core", "veth", ...)
  std::string bus_info;     // ETHTOOL_GDRVINFO bus_info (PCI address for PCI devices)
  std::string pci_address;  // basename of /sys/class/net/<if>/device when it is a PCI device
  uint32_t pci_vendor = 0;  // /sys/class/net/<if>/device/vendor (0x15b3 = Mellanox)
  bool is_vf = false;       // /sys/class/net/<if>/device/physfn exists
  DeviceRole role = DeviceRole::kOther;
  std::vector<RdmaPort> rdma_ports;  // ports bound to this netdev (or to its bond, for LAG)
  /// False when the RDMA port listing failed and no kept list (kRdmaPortsKeep) stands in for it:
  /// rdma_ports is then empty for want of an answer, not because no port is bound, and a policy
  /// rule that matches on the RDMA device cannot be decided. True without RDMA netlink
  /// (EPROTONOSUPPORT): that kernel has no RDMA ports to know of.
  bool rdma_ports_known = true;

  bool operator==(const Device&) const = default;
};

/// Named u64 counters in kernel order (ethtool string set, RDMA hw counters). The names are
/// shared between samples of the same string-set generation, so a sample copies only values.
struct CounterSet {
  std::shared_ptr<const std::vector<std::string>> names;
  std::vector<uint64_t> values;

  size_t size() const { return values.size(); }
};

}  // namespace roceqos
