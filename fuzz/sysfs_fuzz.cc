// Parsers of sysfs / configfs / debugfs / procfs file contents (host.cc, dcqcn_params.cc,
// process_stats.cc, pci_function.cc, roce_gids.cc, lldp/control_socket.cc's /proc/net/unix lines).
#include <string_view>

#include "collectors/dcqcn_params.h"
#include "collectors/host.h"
#include "collectors/lldp/control_socket.h"
#include "collectors/pci_function.h"
#include "collectors/process_stats.h"
#include "collectors/roce_gids.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view content(reinterpret_cast<const char*>(data), size);
  (void)roceqos::ParseEnableFlag(content);
  (void)roceqos::ParseSmallInt(content, 0, 7);
  (void)roceqos::ParseMofedTrafficClass(content);
  (void)roceqos::ParseDcqcnParam(content);
  (void)roceqos::ParseProcStat(content);
  (void)roceqos::ParseProcStatus(content);
  (void)roceqos::ParseMaxOpenFiles(content);
  (void)roceqos::ParseBootTime(content);
  (void)roceqos::ParseIfindex(content);
  (void)roceqos::IsPciAddress(content);  // names read from sysfs listings and identities
  (void)roceqos::IsNetdevName(content);
  (void)roceqos::lldp::ParseUnixSocketLine(content);
  (void)roceqos::ParseGidText(content);
  (void)roceqos::ParseGidType(content);
  (void)roceqos::IsRdmaDeviceName(content);
  return 0;
}
