#pragma once

// What the kernel shows now of one PCI function: its netdevs (with their ifindex) and its RDMA
// devices, read from sysfs at the moment of asking. The write gate resolves a device's stable
// identity ("pci:<address>") through it before each write, so a driver reload, a rename or an
// eth2/eth3 swap is seen at that moment, not at discovery.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/observed.h"
#include "base/result.h"

namespace roceqos {

struct PciNetdev {
  std::string name;
  int ifindex = 0;  // /sys/class/net/<name>/ifindex
  bool operator==(const PciNetdev&) const = default;
};

struct PciFunction {
  std::string address;                    // "0000:3b:00.0"
  std::vector<PciNetdev> netdevs;         // /sys/bus/pci/devices/<address>/net/<name>, sorted
  std::vector<std::string> rdma_devices;  // /sys/bus/pci/devices/<address>/infiniband/<name>
  bool operator==(const PciFunction&) const = default;
};

/// Reads /sys/bus/pci/devices/<address>/ under `sysfs_root` (normally "/sys"). Absent when the
/// kernel has no such function (unbound and removed, or never there); failed on an address that
/// is not a PCI address (nothing outside the PCI tree is read), a directory that cannot be
/// listed, or a netdev whose ifindex cannot be read.
Observed<PciFunction> ReadPciFunction(const std::string& sysfs_root, std::string_view address);

/// /sys/class/net/<netdev>/ifindex: absent when the netdev does not exist.
Observed<int> ReadNetdevIfindex(const std::string& sysfs_root, std::string_view netdev);

/// The PCI address of `netdev` (its device link into the PCI bus), nullopt when it has none
/// (veth, bond, a platform device) or does not exist. The same test as discovery's.
std::optional<std::string> NetdevPciAddress(const std::string& sysfs_root, std::string_view netdev);

/// A PCI address as sysfs names a function: <domain>:<bus>:<device>.<function>, lower-case hex
/// ("0000:3b:00.0"; the domain may be longer than 4 digits, VMD's is 5).
bool IsPciAddress(std::string_view address);
/// A netdev name the kernel could have given (dev_valid_name): 1..15 bytes, not "." or "..",
/// no '/', ':' or whitespace. Keeps a name from leaving /sys/class/net/.
bool IsNetdevName(std::string_view name);

/// The ifindex file's content: a positive decimal int.
Result<int> ParseIfindex(std::string_view content);

}  // namespace roceqos
