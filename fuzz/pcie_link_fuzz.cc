// Parsers of the PCIe sysfs files (collectors/pcie_link.cc): current_link_speed/max_link_speed,
// current_link_width/max_link_width (drivers/pci/pci-sysfs.c) and the AER statistics
// aer_dev_{correctable,nonfatal,fatal} (drivers/pci/pcie/aer.c).
#include <string_view>

#include "collectors/pcie_link.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view content(reinterpret_cast<const char*>(data), size);
  (void)roceqos::ParsePcieLinkSpeed(content);
  (void)roceqos::ParsePcieLinkWidth(content);
  for (std::string_view total : {"ERR_COR", "ERR_NONFATAL", "ERR_FATAL"}) {
    auto parsed = roceqos::ParseAerTotal(content, total);
    if (!parsed && parsed.error().message.empty()) __builtin_trap();  // every error says why
  }
  return 0;
}
