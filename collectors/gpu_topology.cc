#include "collectors/gpu_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <utility>

#include "base/enum_names.h"
#include "base/trim.h"
#include "collectors/host.h"
#include "collectors/pci_function.h"
#include "collectors/pcie_link.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// PCI_VENDOR_ID_NVIDIA, PCI_CLASS_DISPLAY_VGA and PCI_CLASS_DISPLAY_3D (include/linux/pci_ids.h;
// kernel-internal, not UAPI). The class file holds PCI_CLASS_REVISION >> 8 (linux/pci_regs.h):
// base class, sub-class, prog-if; the two upper bytes are PCI_CLASS_DEVICE.
constexpr uint32_t kVendorNvidia = 0x10de;
constexpr uint32_t kClassDisplayVga = 0x0300;
constexpr uint32_t kClassDisplay3d = 0x0302;
// MAX_NUMNODES is 1 << CONFIG_NODES_SHIFT, at most 10 bits.
constexpr int kMaxNumaNode = 1023;
// Two devices below one switch: down to it (their ports) and up from it: four hops.
constexpr size_t kOneSwitchHops = 4;

bool IsHex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
  });
}

// A host bridge's directory: "pci" + pci_domain_nr ("%04x", wider for VMD) + ":" + root bus.
bool IsHostBridgeName(std::string_view name) {
  if (!name.starts_with("pci")) return false;
  name.remove_prefix(3);
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos || colon < 4 || colon > 8) return false;
  return IsHex(name.substr(0, colon)) && name.size() == colon + 3 && IsHex(name.substr(colon + 1));
}

// One file of a device directory. `missing` stays a separate answer: the callers decide whether
// it means "vanished" (vendor, class) or "not said" (numa_node without CONFIG_NUMA).
struct Read {
  bool missing = false;
  std::string content;
};
Result<Read> ReadDeviceFile(const std::string& path) {
  FileRead file = ReadSmallFile(path);
  if (file.missing) return Read{true, {}};
  if (!file.error.empty()) return MakeError(file.errnum != 0 ? file.errnum : EIO, file.error);
  return Read{false, std::move(file.content)};
}

template <typename T>
Error NamedError(const std::string& path, const Result<T>& parsed) {
  return MakeError(kMalformedText, fmt::format("{}: {}", path, parsed.error().message));
}

Result<std::optional<int>> ReadNumaNode(const fs::path& dir) {
  const std::string path = (dir / "numa_node").string();
  auto file = ReadDeviceFile(path);
  if (!file) return file.error();
  if (file->missing) return std::optional<int>();  // a kernel without CONFIG_NUMA
  auto node = ParseNumaNode(file->content);
  if (!node) return NamedError(path, node);
  return *node;
}

// The placement of a resolved device directory, with its numa_node.
Result<PciPlacement> PlaceResolved(const fs::path& dir) {
  auto placement = ParsePciDevicePath(dir.string());
  if (!placement) return placement.error();
  auto numa = ReadNumaNode(dir);
  if (!numa) return numa.error();
  placement->numa_node = *numa;
  return std::move(*placement);
}

// An ID file of /sys/bus/pci/devices/<address>; nullopt when the device is gone.
Result<std::optional<uint32_t>> ReadIdFile(const std::string& dir, const char* name, int digits) {
  const std::string path = fmt::format("{}/{}", dir, name);
  auto file = ReadDeviceFile(path);
  if (!file) return file.error();
  if (file->missing) return std::optional<uint32_t>();
  auto id = ParsePciHexId(file->content, digits);
  if (!id) return NamedError(path, id);
  return std::optional<uint32_t>(*id);
}

// One entry of /sys/bus/pci/devices: a GPU, or nullopt (another device, or gone meanwhile).
Result<std::optional<GpuDevice>> ReadGpuCandidate(const std::string& sysfs_root,
                                                  const std::string& address) {
  using Maybe = std::optional<GpuDevice>;
  const std::string dir = fmt::format("{}/bus/pci/devices/{}", sysfs_root, address);
  // vendor_show / class_show (drivers/pci/pci-sysfs.c): "0x%04x\n" of PCI_VENDOR_ID and
  // "0x%06x\n" of the class code (PCI_CLASS_REVISION >> 8).
  auto vendor = ReadIdFile(dir, "vendor", 4);
  if (!vendor) return vendor.error();
  if (!vendor->has_value() || **vendor != kVendorNvidia) return Maybe();
  auto klass = ReadIdFile(dir, "class", 6);
  if (!klass) return klass.error();
  if (!klass->has_value() || !IsNvidiaGpu(**vendor, **klass >> 8)) return Maybe();
  std::error_code ec;
  const fs::path resolved = fs::canonical(dir, ec);
  if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory)
    return Maybe();
  if (ec) return MakeError(ec.value(), fmt::format("resolve {}: {}", dir, ec.message()));
  auto placement = PlaceResolved(resolved);
  if (!placement) return placement.error();
  GpuDevice gpu{std::move(*placement), DcgmPciBusId(address), **klass >> 8};
  return Maybe(std::move(gpu));
}

Result<std::vector<GpuDevice>> ReadGpus(const std::string& sysfs_root) {
  // Directories following links: a device removed after the listing's readdir but before its
  // stat has a dangling link and is left out here already.
  const DirList devices = ListSubdirectories(sysfs_root + "/bus/pci/devices");
  if (devices.missing) return std::vector<GpuDevice>();  // no PCI bus at all
  if (!devices.error.empty()) return MakeError(EIO, devices.error);
  std::vector<GpuDevice> gpus;
  for (const std::string& address : devices.files) {
    if (!IsPciAddress(address)) continue;
    auto gpu = ReadGpuCandidate(sysfs_root, address);
    if (!gpu) return gpu.error();
    if (gpu->has_value()) gpus.push_back(std::move(**gpu));
  }
  std::sort(gpus.begin(), gpus.end(), [](const GpuDevice& a, const GpuDevice& b) {
    return a.placement.address < b.placement.address;
  });
  return gpus;
}

Result<std::vector<NicPlacement>> ReadNics(const std::string& sysfs_root,
                                           const std::vector<std::string>& netdevs) {
  std::vector<NicPlacement> nics;
  for (const std::string& netdev : netdevs) {
    if (!IsNetdevName(netdev)) continue;  // never leaves /sys/class/net
    auto function = ResolveNetdevPciFunction(sysfs_root, netdev);
    if (!function) return function.error();
    if (!function->has_value()) continue;
    auto placement = PlaceResolved(**function);
    if (!placement) return placement.error();
    nics.push_back({netdev, std::move(*placement)});
  }
  return nics;
}

}  // namespace

std::string_view PcieRelationName(PcieRelation relation) {
  static constexpr EnumName<PcieRelation> kNames[] = {
      {PcieRelation::kPix, "PIX"},   {PcieRelation::kPxb, "PXB"}, {PcieRelation::kPhb, "PHB"},
      {PcieRelation::kNode, "NODE"}, {PcieRelation::kSys, "SYS"},
  };
  return NameOf(kNames, relation, "SYS");
}

Result<std::optional<int>> ParseNumaNode(std::string_view content) {
  // numa_node_show (drivers/pci/pci-sysfs.c): "%d\n" of dev_to_node(); NUMA_NO_NODE (-1) when
  // the firmware gave no proximity domain (_PXM) or the machine has one node.
  auto node = ParseSmallInt(content, -1, kMaxNumaNode);
  if (!node) return MakeError(kMalformedText, fmt::format("numa_node {}", node.error().message));
  if (*node < 0) return std::optional<int>();
  return std::optional<int>(*node);
}

Result<uint32_t> ParsePciHexId(std::string_view content, int digits) {
  const std::string_view text = TrimWhitespace(content);
  const std::string_view hex = text.starts_with("0x") ? text.substr(2) : std::string_view{};
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
  if (hex.empty() || hex.size() > static_cast<size_t>(digits) || ec != std::errc() ||
      end != hex.data() + hex.size()) {
    return MakeError(kMalformedText,
                     fmt::format("\"{}\" is not 0x and {} hex digits", text.substr(0, 32), digits));
  }
  return value;
}

bool IsNvidiaGpu(uint32_t vendor, uint32_t class_code) {
  return vendor == kVendorNvidia &&
         (class_code == kClassDisplay3d || class_code == kClassDisplayVga);
}

std::string DcgmPciBusId(std::string_view address) {
  if (!IsPciAddress(address)) return {};
  const size_t colon = address.find(':');
  std::string id = fmt::format("{:0>8}{}", address.substr(0, colon), address.substr(colon));
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return id;
}

Result<PciPlacement> ParsePciDevicePath(std::string_view resolved) {
  while (resolved.size() > 1 && resolved.back() == '/') resolved.remove_suffix(1);
  PciPlacement placement;
  std::string_view rest = resolved;
  while (!rest.empty()) {
    const size_t slash = rest.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? rest : rest.substr(slash + 1);
    if (IsHostBridgeName(name)) {
      placement.host_bridge = std::string(rest);
      break;
    }
    if (!IsPciAddress(name)) break;
    placement.chain.insert(placement.chain.begin(), std::string(name));
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(0, slash);
  }
  if (placement.chain.empty() || placement.host_bridge.empty()) {
    return MakeError(kMalformedText, fmt::format("{} is not a PCI function below a host bridge",
                                                 resolved.substr(0, 256)));
  }
  placement.address = placement.chain.back();
  return placement;
}

PcieRelation RelatePlacements(const PciPlacement& a, const PciPlacement& b) {
  if (a.host_bridge != b.host_bridge) {
    // Both unknown: the kernel knows of no NUMA affinity at all (one node, or no SRAT), so
    // nothing says they are apart. One known and one not: nothing says they are together.
    return a.numa_node == b.numa_node ? PcieRelation::kNode : PcieRelation::kSys;
  }
  size_t common = 0;
  while (common < a.chain.size() && common < b.chain.size() && a.chain[common] == b.chain[common])
    ++common;
  if (common == 0) return PcieRelation::kPhb;  // different root ports of one root complex
  // Below the deepest shared device (a switch's upstream port), each side climbs through its own
  // ports: one switch is at most two devices on either side.
  const size_t hops = (a.chain.size() - common) + (b.chain.size() - common);
  return hops <= kOneSwitchHops ? PcieRelation::kPix : PcieRelation::kPxb;
}

Result<GpuTopology> ReadGpuTopology(const std::string& sysfs_root,
                                    const std::vector<std::string>& netdevs) {
  auto gpus = ReadGpus(sysfs_root);
  if (!gpus) return gpus.error();
  auto nics = ReadNics(sysfs_root, netdevs);
  if (!nics) return nics.error();
  GpuTopology topology{std::move(*gpus), std::move(*nics), {}};
  topology.pairs.reserve(topology.nics.size() * topology.gpus.size());
  for (const NicPlacement& nic : topology.nics) {
    for (const GpuDevice& gpu : topology.gpus) {
      topology.pairs.push_back(
          {nic.netdev, gpu.pci_bus_id, RelatePlacements(nic.placement, gpu.placement)});
    }
  }
  return topology;
}

}  // namespace roceqos
