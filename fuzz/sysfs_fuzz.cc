// Parsers of sysfs / configfs / debugfs file contents (host.cc, dcqcn_params.cc).
#include <string_view>

#include "collectors/dcqcn_params.h"
#include "collectors/host.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view content(reinterpret_cast<const char*>(data), size);
  (void)roceqos::ParseEnableFlag(content);
  (void)roceqos::ParseSmallInt(content, 0, 7);
  (void)roceqos::ParseMofedTrafficClass(content);
  (void)roceqos::ParseDcqcnParam(content);
  return 0;
}
