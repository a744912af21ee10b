// Entry names of /var/log/pods (pod_log_dirs.cc): one name per line, as a directory listing
// would give them (a name cannot hold '/' or NUL, but anything else reaches the parser).
#include <string>
#include <string_view>
#include <vector>

#include "collectors/pod_log_dirs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> entries;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    entries.emplace_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  const roceqos::PodNames names = roceqos::PodNamesFromEntries(entries);
  // Every kept value may become a label: bounded whatever the input.
  for (const auto& [uid, pod] : names) {
    if (uid.size() > 36 || pod.pod_namespace.size() > 63 || pod.name.size() > 253 ||
        uid.find('_') != std::string::npos || pod.name.find('_') != std::string::npos) {
      __builtin_trap();
    }
  }
  if (names.size() > roceqos::kMaxPodLogDirs) __builtin_trap();
  return 0;
}
