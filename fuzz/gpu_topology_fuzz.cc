// Parsers of the GPU topology's sysfs text (collectors/gpu_topology.cc): numa_node, vendor and
// class (drivers/pci/pci-sysfs.c), and the resolved device path split into host bridge and chain.
#include <string_view>

#include "collectors/gpu_topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view content(reinterpret_cast<const char*>(data), size);
  (void)roceqos::ParseNumaNode(content);
  (void)roceqos::ParsePciHexId(content, 4);
  (void)roceqos::ParsePciHexId(content, 6);
  auto placement = roceqos::ParsePciDevicePath(content);
  if (placement) {
    // Every placement names its function, last in a non-empty chain, below a host bridge.
    if (placement->chain.empty() || placement->address != placement->chain.back() ||
        placement->host_bridge.empty() || roceqos::DcgmPciBusId(placement->address).empty())
      __builtin_trap();
    if (roceqos::RelatePlacements(*placement, *placement) != roceqos::PcieRelation::kPix)
      __builtin_trap();
  } else if (placement.error().message.empty()) {
    __builtin_trap();  // every error says why
  }
  return 0;
}
