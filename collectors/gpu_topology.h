#pragma once

// The PCIe distance between each selected NIC and each NVIDIA GPU of the host, from sysfs alone:
// the relation `nvidia-smi topo -m` prints (PIX, PXB, PHB, NODE, SYS) and the NUMA node of both
// ends (docs/gpus.md, docs/kernel-interfaces.md §7.12). No NVML, no driver: a node whose GPUs are
// bound to vfio-pci, or whose nvidia module is not loaded, reads the same. The GPU's PCI address
// is also spelled as dcgm-exporter's `pci_bus_id` label spells it, so the two join.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace roceqos {

/// Nearest first; the names are nvidia-smi's legend (docs/gpus.md "Relations").
enum class PcieRelation {
  kPix,   // at most one PCIe switch (bridge) between them
  kPxb,   // several switches, below the same root port: no host bridge crossed
  kPhb,   // through the PCIe host bridge (the root complex) they share
  kNode,  // different host bridges in one NUMA node
  kSys,   // different NUMA nodes: the SMP interconnect (UPI, xGMI)
};
std::string_view PcieRelationName(PcieRelation relation);

/// Where a PCI function sits, from its resolved sysfs directory.
struct PciPlacement {
  std::string address;             // "0000:3b:00.0", the function itself
  std::string host_bridge;         // the resolved path through "pci0000:3a": the root complex
  std::vector<std::string> chain;  // PCI devices from the root port down to `address` (last)
  std::optional<int> numa_node;    // numa_node; nullopt when -1 (no affinity known) or missing

  bool operator==(const PciPlacement&) const = default;
};

struct GpuDevice {
  PciPlacement placement;
  std::string pci_bus_id;   // dcgm-exporter's spelling: "00000000:3B:00.0"
  uint32_t class_code = 0;  // class >> 8: 0x0302 or 0x0300
  bool operator==(const GpuDevice&) const = default;
};

struct NicPlacement {
  std::string netdev;
  PciPlacement placement;
  bool operator==(const NicPlacement&) const = default;
};

struct NicGpuRelation {
  std::string netdev;
  std::string gpu_pci_bus_id;
  PcieRelation relation = PcieRelation::kSys;
  bool operator==(const NicGpuRelation&) const = default;
};

struct GpuTopology {
  std::vector<GpuDevice> gpus;        // sorted by PCI address
  std::vector<NicPlacement> nics;     // in the order asked; one without a PCI function: none
  std::vector<NicGpuRelation> pairs;  // one per NIC x GPU, NIC-major
};

/// Lists /sys/bus/pci/devices under `sysfs_root` (normally "/sys"), keeps the NVIDIA display
/// controllers (IsNvidiaGpu), resolves each and each of `netdevs` to its place in /sys/devices and
/// relates every pair. A device that vanishes while being read, a netdev that does not exist or has
/// no PCI function, has no entry. A file that cannot be read or does not parse is an Error naming
/// it. Cost: one readlink walk and up to three small reads per PCI function of the host.
Result<GpuTopology> ReadGpuTopology(const std::string& sysfs_root,
                                    const std::vector<std::string>& netdevs);

/// The relation between two placements (docs/gpus.md "Relations").
PcieRelation RelatePlacements(const PciPlacement& a, const PciPlacement& b);

/// Splits a resolved device directory ("/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0") into
/// the host bridge and the chain below it. An Error when the last component is not a PCI address
/// or the chain does not hang from a "pci<domain>:<bus>" directory. `numa_node` is left unset.
Result<PciPlacement> ParsePciDevicePath(std::string_view resolved);

/// numa_node: "%d\n"; -1 (no affinity known) is nullopt.
Result<std::optional<int>> ParseNumaNode(std::string_view content);
/// vendor ("0x%04x\n") and class ("0x%06x\n"): "0x" and at most `digits` hex digits.
Result<uint32_t> ParsePciHexId(std::string_view content, int digits);
/// Vendor 0x10de with class 0x0302 (3D controller: every data-center GPU) or 0x0300 (VGA: the
/// workstation boards). Not the GPU's audio function (0x0403), not an NVSwitch (0x0680).
bool IsNvidiaGpu(uint32_t vendor, uint32_t class_code);
/// "0000:3b:00.0" -> "00000000:3B:00.0": NVML's busId (NVML_DEVICE_PCI_BUS_ID_FMT, an 8-digit
/// upper-case domain), which dcgm-exporter's pci_bus_id label carries. Empty for a non-address.
std::string DcgmPciBusId(std::string_view address);

}  // namespace roceqos
