// ethtool ETH_SS_STATS string table to port-counter mapping (ethtool_map.cc). The input is the
// string set as the kernel returns it: NUL-terminated ETH_GSTRING_LEN (32-byte) records.
#include <linux/ethtool.h>

#include <cstring>
#include <string>
#include <vector>

#include "collectors/ethtool_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> names;
  for (size_t at = 0; at < size; at += ETH_GSTRING_LEN) {
    const char* record = reinterpret_cast<const char*>(data + at);
    size_t room = std::min<size_t>(size - at, ETH_GSTRING_LEN);
    names.emplace_back(record, strnlen(record, room));
  }
  auto mapped = roceqos::MapMlx5EthtoolNames(names);
  if (mapped.size() > names.size()) __builtin_trap();  // one mapping per name at most
  return 0;
}
