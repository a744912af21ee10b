// The policy YAML loader (exporter/qos/policy.cc ParsePolicy), selector regexes included: any
// document gives a PolicySet or a one-line "<source>:<line>:<column>: <what>" Error. An accepted
// document must render back to YAML that parses again (RenderPolicyYaml's contract).
#include <string_view>

#include "exporter/qos/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto policy = roceqos::ParsePolicy(text, "fuzz.yaml");
  if (policy && !roceqos::ParsePolicy(roceqos::RenderPolicyYaml(*policy), "rendered.yaml")) {
    __builtin_trap();
  }
  return 0;
}
