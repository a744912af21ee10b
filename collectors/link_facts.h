#pragma once

// The link facts of the validation checklist that are not QoS: the negotiated link speed and the
// SR-IOV VF count of the netdev's PCI function (docs/check.md, docs/kernel-interfaces.md §7).

#include <cstdint>
#include <string>
#include <string_view>

#include "base/observed.h"
#include "base/result.h"

namespace roceqos {

struct LinkFacts {
  /// /sys/class/net/<if>/speed, in Mb/s. 0 means "no link": the kernel answers EINVAL while the
  /// interface is not running and prints SPEED_UNKNOWN (-1) while the carrier is down.
  /// Absent when the netdev has no such file.
  Observed<uint32_t> speed_mbps;
  /// /sys/class/net/<if>/device/sriov_numvfs: the VFs enabled on the PCI function. Absent for a
  /// netdev without a PCI parent or a function without the SR-IOV capability.
  Observed<uint32_t> sriov_numvfs;

  bool operator==(const LinkFacts&) const = default;
};

/// Reads both files under `sysfs_root` (normally "/sys").
LinkFacts ReadLinkFacts(const std::string& sysfs_root, std::string_view netdev);

/// The speed file's content in Mb/s; "-1" (SPEED_UNKNOWN) is 0, "no link".
Result<uint32_t> ParseLinkSpeed(std::string_view content);

}  // namespace roceqos
