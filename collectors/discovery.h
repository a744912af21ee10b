#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/device.h"
#include "collectors/netlink/attr.h"
#include "collectors/rdma.h"

namespace roceqos {

struct Inventory {
  std::vector<Device> devices;  // every netdev in the netns, in dump order, roles set
  /// Every RDMA port once, in PORT_GET order. Read RDMA counters by iterating this list: a LAG
  /// port also appears in Device::rdma_ports of both its slave and its bond.
  std::vector<RdmaPort> rdma_ports;
  bool rdma_netlink_available = true;  // false when socket(NETLINK_RDMA) is EPROTONOSUPPORT
  /// Set when RDMA netlink exists but listing its ports failed. The netdevs are still complete:
  /// an RDMA fault must not hide the ethtool counters of every device. Without a kept list
  /// (rdma_ports_stale_seconds unset), every device has rdma_ports_known = false.
  std::optional<Error> rdma_error;
  /// Set when the port listing failed (rdma_error) and rdma_ports are the last good list,
  /// kept for at most kRdmaPortsKeep: how old that list is, in seconds.
  std::optional<double> rdma_ports_stale_seconds;
};

/// How long discovery keeps publishing the last good RDMA port list while listing fails: long
/// enough to ride out a DUMP_INTR storm or a slow ib_core, short enough that a removed device
/// does not linger.
inline constexpr std::chrono::seconds kRdmaPortsKeep{60};

/// Opens the RDMA netlink collector discovery lists ports with; tests inject recorded replies.
using RdmaOpener = std::function<Result<std::unique_ptr<RdmaCollector>>()>;

/// Builds the netdev and RDMA inventory: one RTM_GETLINK dump, one ETHTOOL_GDRVINFO per netdev,
/// sysfs for PCI vendor / physfn, one RDMA_NLDEV_CMD_GET dump and one PORT_GET dump per RDMA
/// device (the kernel cannot dump ports of all devices at once).
///
/// A kernel without RDMA netlink (EPROTONOSUPPORT) is not an error: rdma_netlink_available is
/// false and discovery logs that once per process (not per call). Discover() retries opening
/// RDMA netlink on every call, because ib_core may be loaded after the exporter starts. Any
/// other failure (netlink error, timeout, malformed reply) is an Error: keep the last inventory.
/// Not thread-safe. Sockets and the ioctl fd belong to the netns of the thread that first calls
/// Discover().
class Discovery {
 public:
  explicit Discovery(std::string sysfs_root = "/sys");
  Discovery(std::string sysfs_root, RdmaOpener open_rdma);
  ~Discovery();
  Result<Inventory> Discover();
  /// The clock the RDMA staleness bound is measured on (tests inject one).
  void SetClock(std::function<std::chrono::steady_clock::time_point()> clock);

 private:
  struct Impl;
  std::string sysfs_root_;
  std::unique_ptr<Impl> impl_;  // sockets kept open between calls
};

/// Role from the fields discovery filled: bond master (kind "bond"), bond member (slave_kind
/// "bond"), VF (is_vf), PF (a PCI function that is not a VF), otherwise other.
DeviceRole ClassifyRole(const Device& device);

/// The default selection: a Mellanox PF (pci_vendor 0x15b3, not a VF) or any netdev bound to an
/// RDMA port. The --collector include/exclude regexes override it in the exporter.
bool SelectedByDefault(const Device& device);

// Building blocks of Discover(), public so recorded replies and fixture trees can drive them.

/// Parses an RTM_NEWLINK message body (struct ifinfomsg + IFLA_* attributes) into the netlink
/// fields of a Device (no master name, driver, sysfs data or role yet).
Result<Device> ParseLinkReply(netlink::Bytes body);

/// Fills pci_address, pci_vendor and is_vf from <sysfs_root>/class/net/<name>/device. A netdev
/// without a device link (virtual) or a file that cannot be read leaves the fields at zero.
void ReadSysfsInfo(std::string_view sysfs_root, Device& device);

/// Resolves master names from the same list, attaches RDMA ports to the netdev PORT_GET named
/// (and, when that netdev is a bond member, to its bond as well: mlx5 RoCE LAG reports a slave
/// PF, docs/kernel-interfaces.md §8.2) and classifies roles.
Inventory AssembleInventory(std::vector<Device> devices, std::vector<RdmaPort> ports,
                            bool rdma_netlink_available);

}  // namespace roceqos
