#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectors/device.h"
#include "collectors/result.h"

namespace roceqos {

struct Inventory {
  std::vector<Device> devices;        // every netdev in the netns, roles classified
  bool rdma_netlink_available = true;  // false when socket(NETLINK_RDMA) is EPROTONOSUPPORT
};

/// Builds the netdev and RDMA inventory: one RTM_GETLINK dump, one ETHTOOL_GDRVINFO per netdev,
/// sysfs for PCI vendor / physfn, one RDMA_NLDEV_CMD_GET dump and one PORT_GET dump.
class Discovery {
 public:
  explicit Discovery(std::string sysfs_root = "/sys");
  ~Discovery();
  Result<Inventory> Discover();

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

}  // namespace roceqos
