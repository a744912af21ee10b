#include "exporter/qos/policy.h"

// FNV-1a of the rendered policy: the policy_hash label of the QoS series.

#include <fmt/format.h>

#include <cstdint>

namespace roceqos {

std::string Fnv1a64Hex(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", hash);
}

std::string PolicyFingerprint(const QosPolicy& policy) {
  return Fnv1a64Hex(RenderQosPolicyYaml(policy, 0));
}

}  // namespace roceqos
