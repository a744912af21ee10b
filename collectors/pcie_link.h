#pragma once

// PCIe link health of a netdev's PCI function and of its upstream port (the bridge above it),
// from sysfs only: the trained against the maximum link speed and width, and the AER error
// totals (docs/pcie.md, docs/kernel-interfaces.md §7.11). No firmware call: every file is the
// kernel's copy of config space or its own AER statistics.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace roceqos {

/// What one PCI device's sysfs directory says; a missing file (or "Unknown") is nullopt.
struct PcieDeviceLink {
  std::string address;                      // "0000:3b:00.0", the directory's name
  std::optional<double> speed_gts;          // current_link_speed, GT/s
  std::optional<double> max_speed_gts;      // max_link_speed
  std::optional<uint32_t> width;            // current_link_width, lanes (0: link not trained)
  std::optional<uint32_t> max_width;        // max_link_width
  std::optional<uint64_t> aer_correctable;  // aer_dev_correctable: TOTAL_ERR_COR
  std::optional<uint64_t> aer_nonfatal;     // aer_dev_nonfatal: TOTAL_ERR_NONFATAL
  std::optional<uint64_t> aer_fatal;        // aer_dev_fatal: TOTAL_ERR_FATAL

  bool operator==(const PcieDeviceLink&) const = default;
};

/// A netdev's PCI function and, when the directory above it is a PCI device, its upstream port.
struct PcieLink {
  PcieDeviceLink function;
  std::optional<PcieDeviceLink> upstream;

  /// The fastest speed and widest width the link can train to: the lower of the two ends'
  /// maximums (a Gen4 NIC in a Gen3 slot trains at Gen3, which is not a degradation). The
  /// function's own maximum when the upstream port does not say.
  std::optional<double> LinkMaxSpeedGts() const;
  std::optional<uint32_t> LinkMaxWidth() const;

  bool operator==(const PcieLink&) const = default;
};

/// Reads /sys/class/net/<netdev>/device and the PCI device above it, under `sysfs_root`
/// (normally "/sys"). nullopt when the netdev has no PCI function (veth, a bond, virtio's
/// virtioN device). A malformed file or a failed read is an Error naming the file.
Result<std::optional<PcieLink>> ReadPcieLink(const std::string& sysfs_root,
                                             std::string_view netdev);

/// The resolved directory of `netdev`'s PCI function under `sysfs_root`
/// (".../devices/pci0000:00/0000:00:02.0/0000:3b:00.0"): nullopt when the netdev does not exist or
/// its device is not a PCI function. A failed resolution is an Error naming the link.
Result<std::optional<std::filesystem::path>> ResolveNetdevPciFunction(const std::string& sysfs_root,
                                                                      std::string_view netdev);

/// Reads one PCI device directory; every file may be missing.
Result<PcieDeviceLink> ReadPcieDeviceLink(const std::string& dir);

/// current_link_speed / max_link_speed: "16.0 GT/s PCIe", "8 GT/s" (before 5.2), "Unknown" or
/// "Unknown speed" -> nullopt. Anything else is an Error.
Result<std::optional<double>> ParsePcieLinkSpeed(std::string_view content);
/// current_link_width / max_link_width: a decimal lane count ("%u\n").
Result<uint32_t> ParsePcieLinkWidth(std::string_view content);
/// aer_dev_{correctable,nonfatal,fatal}: "<name> <count>" lines, the last "TOTAL_<total> <n>";
/// returns that total. `total` is "ERR_COR", "ERR_NONFATAL" or "ERR_FATAL".
Result<uint64_t> ParseAerTotal(std::string_view content, std::string_view total);

}  // namespace roceqos
