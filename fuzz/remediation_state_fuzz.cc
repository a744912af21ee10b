// The remediation state file parser (exporter/qos/remediate_store.cc ParseRemediationState): the
// file outlives the process and may be truncated, hand-edited or planted. Any bytes give a
// PersistedState or an Error, never an exception or a crash; an accepted file serializes to text
// that parses back to the same state (the store's own round trip).
#include <string>

#include "exporter/qos/remediate_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto state = roceqos::ParseRemediationState(text, "fuzz.json");
  if (!state) return 0;
  auto again = roceqos::ParseRemediationState(roceqos::SerializeRemediationState(*state), "again");
  if (!again || !(*again == *state)) __builtin_trap();
  return 0;
}
