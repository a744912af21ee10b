#pragma once

// Pluggable-module (transceiver) EEPROM collector: reads the module's memory half page by half
// page through ethtool netlink (ETHTOOL_MSG_MODULE_EEPROM_GET), falling back to the
// ETHTOOL_GMODULEINFO / ETHTOOL_GMODULEEEPROM ioctl, and decodes it (sff8636.h, cmis.h).
//
// Every read is a firmware register access on mlx5 (MCIA, tens of ms per page): call it on its own
// slow cadence, never from the counter sampler (docs/transceiver.md).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/netlink/socket.h"
#include "collectors/transceiver/transceiver.h"

namespace roceqos {

/// One half page of module memory at I2C address 0x50: the lower page (bytes 0-127, page 0) when
/// `upper` is false, else bytes 128-255 of page `page` in bank `bank`.
struct ModulePageAddress {
  uint8_t page = 0;
  uint8_t bank = 0;
  bool upper = true;
};

/// Which kernel interface served a module read: ethtool netlink (ETHTOOL_MSG_MODULE_EEPROM_GET,
/// any page) or the SIOCETHTOOL ioctl (ETHTOOL_GMODULEEEPROM, one flat image: SFF-8636 pages
/// 00h-03h, CMIS page 00h only).
enum class ModuleAccessMethod : uint8_t { kNetlink, kIoctl };
std::string_view ModuleAccessMethodName(ModuleAccessMethod method);  // "netlink" / "ioctl"
/// The label value of a decoder's spec: "sff8636" / "cmis".
std::string_view ModuleSpecName(ModuleSpec spec);

/// How one module read went: the degraded path is visible (metric, log), not silent.
struct ModuleAccess {
  ModuleAccessMethod method = ModuleAccessMethod::kNetlink;  // kIoctl if any half page came so
  std::string fallback_reason;        // why netlink was not used (its error), with kIoctl
  std::vector<uint8_t> unread_pages;  // extra pages the spec wants that the device refused
};

/// "01h 02h 11h" (empty for none): the label and log form of ModuleAccess::unread_pages. Spaces,
/// not commas, which label-splitting tools (and the testbed's shell helpers) trip over.
std::string FormatModulePages(const std::vector<uint8_t>& pages);

/// The kernel access, behind an interface so tests feed page images.
class ModuleEepromIo {
 public:
  virtual ~ModuleEepromIo() = default;
  /// The path that served the last successful ReadHalfPage, and why netlink was not used.
  virtual ModuleAccessMethod LastMethod() const { return ModuleAccessMethod::kNetlink; }
  virtual std::string FallbackReason() const { return {}; }
  /// Exactly 128 bytes or an Error: EOPNOTSUPP when the device has no module EEPROM access or the
  /// page is not reachable (e.g. page 11h through the ioctl), EPERM/EACCES without CAP_NET_ADMIN,
  /// ENODEV for a vanished device, EIO/EINVAL/... from the driver (no module plugged: mlx5 EIO).
  virtual Result<std::vector<uint8_t>> ReadHalfPage(const std::string& ifname,
                                                    ModulePageAddress address) = 0;
};

/// The real implementation: ethtool generic netlink first; where the kernel has no ethtool family
/// or answers EOPNOTSUPP (no MODULE_EEPROM_GET before 5.13), the SIOCETHTOOL ioctl with the
/// SFF-8636 flat layout (pages 00h-03h; CMIS modules: page 00h only). Both need CAP_NET_ADMIN
/// (GENL_UNS_ADMIN_PERM; the ioctl is not in the unprivileged list). Reads the network namespace
/// it is first used in. Not thread-safe. `ioctl_only` skips netlink (tests of the fallback).
std::unique_ptr<ModuleEepromIo> MakeKernelModuleEepromIo(bool ioctl_only = false);

/// The half page in one ETHTOOL_MSG_MODULE_EEPROM_GET reply: exactly 128 bytes of
/// ETHTOOL_A_MODULE_EEPROM_DATA, else an Error naming `what` (EIO for a short or empty read,
/// errnum 0 for a malformed message). Public so crafted replies can drive it.
Result<std::vector<uint8_t>> ParseModuleEepromReply(const netlink::NlMessage& reply,
                                                    const std::string& what);

/// The pages a decoder wants after the lower page and page 00h, from the lower page's identifier
/// and memory model: SFF-8636 paged: {03h}; CMIS paged: {01h, 02h, 11h}; flat or unknown: {}.
std::vector<uint8_t> ModuleExtraPages(const std::vector<uint8_t>& lower);

/// Decodes by identifier (lower page byte 0): SFF-8636 or CMIS. EMEDIUMTYPE for any other
/// identifier (SFP, 0x00 = unknown/unprogrammed, ...), errnum 0 for malformed pages.
Result<Transceiver> DecodeModule(const ModulePages& pages);

/// Reads and decodes the module of one netdev.
class ModuleEepromCollector {
 public:
  explicit ModuleEepromCollector(ModuleEepromIo& io) : io_(io) {}

  /// Lower page and page 00h (2 reads), then the spec's extra pages (SFF-8636: +1, CMIS: +3).
  /// An extra page the device refuses (EOPNOTSUPP, EINVAL) is left out and the decode goes on
  /// without it (no thresholds / lane monitors); any other error fails the read. `access`, when
  /// given, receives the path used and the pages left out.
  Result<ModulePages> ReadPages(const std::string& ifname, ModuleAccess* access = nullptr);
  /// ReadPages + DecodeModule. Error().NotSupported(): the netdev has no module EEPROM (veth,
  /// virtio, a copper NIC): report the transceiver as absent, not as failed.
  Result<Transceiver> Read(const std::string& ifname, ModuleAccess* access = nullptr);

 private:
  ModuleEepromIo& io_;
};

}  // namespace roceqos
