#pragma once

// The RoCE GID table of one RDMA port, from sysfs: each populated entry's GID, its RoCE type and
// the netdev it was added for. A GID on a VLAN netdev is what makes the RDMA port send 802.1Q
// tagged frames for the connections that use it, so the table says which netdevs RoCE traffic
// leaves through (the frame-size check, exporter/qos/switch_compare.h; RoCE v2 GID checks).
//
// The kernel's files (drivers/infiniband/core/sysfs.c), under
// <sysfs>/class/infiniband/<device>/ports/<port>/:
//   gids/<i>             show_port_gid: "%pI6", an empty or reserved entry reads as the zero GID
//   gid_attrs/types/<i>  show_port_gid_attr_gid_type: ib_cache_gid_type_str(), "IB/RoCE v1" or
//                        "RoCE v2"; EINVAL for an empty entry
//   gid_attrs/ndevs/<i>  show_port_gid_attr_ndev: the netdev's name (dev->name, whatever netns it
//                        is in); EINVAL for an empty entry or one without a netdev

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "base/observed.h"
#include "base/result.h"
#include "collectors/device.h"

namespace roceqos {

/// enum ib_gid_type (include/rdma/ib_verbs.h) as ib_cache_gid_type_str() spells it.
enum class GidType : uint8_t { kIbRoceV1, kRoceV2 };
inline constexpr EnumName<GidType> kGidTypeNames[] = {
    {GidType::kIbRoceV1, "IB/RoCE v1"},
    {GidType::kRoceV2, "RoCE v2"},
};

struct RoceGid {
  uint32_t index = 0;  // the file name under gids/: the GID index a QP's address vector names
  std::string gid;     // as gids/<i> prints it, "fe80:0000:...:0001"
  GidType type = GidType::kRoceV2;
  std::string netdev;  // gid_attrs/ndevs/<i>

  bool operator==(const RoceGid&) const = default;
};

/// The populated entries of one port's GID table, in index order. Absent when the port has no
/// GID table in sysfs (no such device or port, or a kernel without gids/); failed when a file
/// cannot be read or reads as something the kernel does not write. An entry that empties between
/// its gids/<i> and its gid_attrs reads (EINVAL: a netdev went away) is left out: it is gone.
/// One file read per table entry plus two per populated entry, all sysfs (no device access).
Observed<std::vector<RoceGid>> ReadRoceGids(const std::string& sysfs_root,
                                            std::string_view rdma_device, uint32_t port);

/// The RoCE GIDs of a netdev's RDMA ports, all ports together.
using NetdevRoceGids = Observed<std::vector<RoceGid>>;

/// Every port of `ports` (a Device's rdma_ports) read once, the entries in port order: failed
/// when one table failed (its error), Ok and empty without ports. A port without a table in sysfs
/// is failed too: a bound RoCE port has one, and nothing is known of its GIDs without it.
NetdevRoceGids ReadNetdevRoceGids(const std::string& sysfs_root,
                                  const std::vector<RdmaPort>& ports);

/// gids/<i>'s content: eight groups of four lower-case hex digits ("%pI6"), one newline at most.
/// The zero GID (an empty entry) parses; IsZeroGid tells it apart.
Result<std::string> ParseGidText(std::string_view content);
bool IsZeroGid(std::string_view gid);
/// gid_attrs/types/<i>'s content, one newline at most.
Result<GidType> ParseGidType(std::string_view content);
/// An RDMA device name the kernel could have given (IB_DEVICE_NAME_MAX 64 with the NUL): no '/',
/// not "." or "..": keeps a name from leaving /sys/class/infiniband/.
bool IsRdmaDeviceName(std::string_view name);

}  // namespace roceqos
