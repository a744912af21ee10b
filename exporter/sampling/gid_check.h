#pragma once

// The RoCE v2 GID check: every IPv4/IPv6 address of a selected netdev, and of its VLAN uppers,
// needs a RoCE v2 GID on the RDMA port bound to that netdev, added for the netdev the address is
// on. RDMA CM resolves a connection's source GID from the address it binds to (rdma_resolve_addr:
// the GID whose value is the address and whose netdev is the one the route leaves through), so an
// address without one fails every RoCE v2 connection from or to it while every counter looks
// fine. The kernel adds the GIDs itself (drivers/infiniband/core/roce_gid_mgmt.c: one RoCE v1
// and one RoCE v2 GID per address of the port's netdev and its upper devices); a missing one is
// a driver that was loaded with RoCE v2 off, a GID table full, or a VLAN created on another
// netdev than the one the application binds to.
//
// Which netdevs: a selected netdev with an RDMA port of its own (ChecksGidsOf), and its VLAN
// uppers. A bond is checked with the LAG port discovery lists on it (mlx5_bond_0: RDMA netlink
// names the active member as the port's netdev, but the kernel adds the GIDs of the bond's
// addresses for the bond, docs/kernel-interfaces.md §8.2). A bond member is not checked: its port
// is the bond's (LAG), or, without LAG, the kernel adds the bond's GIDs only on the active
// member's port, which nothing in sysfs names.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/observed.h"
#include "base/result.h"
#include "collectors/addresses.h"
#include "collectors/device.h"
#include "collectors/roce_gids.h"
#include "exporter/core/gid_state.h"

namespace roceqos {

/// Whether `port`, listed on `device`, is the device's own for the check: every port of a bond (its
/// LAG port), none of a bond member, else a port whose bound netdev is the device.
bool ChecksGidsOf(const Device& device, const RdmaPort& port);

/// A netdev whose addresses are checked: the selected netdev or one of its VLAN uppers.
struct AddressCarrier {
  std::string netdev;
  int32_t ifindex = 0;
};

/// The addresses of `carriers` (settled ones: AddressSettled) against `gids`, one port's table
/// or the tables of every port bound to the netdev.
NetdevGidCheck CheckAddressGids(const std::vector<AddressCarrier>& carriers,
                                const std::vector<IfAddress>& addresses,
                                const std::vector<RoceGid>& gids);

/// Where the check reads: a port's GID table and a VLAN upper's ifindex. Tests inject trees.
struct GidReaders {
  std::function<Observed<std::vector<RoceGid>>(const RdmaPort&)> table;
  std::function<std::optional<int32_t>(const std::string& netdev)> ifindex;
};
/// ReadRoceGids and ReadNetdevIfindex (collectors/pci_function.h) under `sysfs_root`.
GidReaders KernelGidReaders(const std::string& sysfs_root);

/// One round over `devices`: the ports bound to each, their tables, the check. A table that
/// cannot be read is an Error in `errors` and leaves its netdev out (unknown, not missing); a
/// table that is absent (no gids/ in sysfs) leaves it out without an error.
struct GidRound {
  GidState state;
  std::vector<Error> errors;
};
GidRound CheckDeviceGids(const std::vector<const Device*>& devices,
                         const std::vector<IfAddress>& addresses, const GidReaders& readers);

}  // namespace roceqos
