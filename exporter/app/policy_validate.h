#pragma once

// `roce_qos_exporter policy validate FILE`: what the daemon would say about a policy file, without
// a device or the kernel, so a policy can be checked where it is written (a laptop, CI, a
// ConfigMap's pipeline) before any node loads it. docs/policy.md "Validating a policy file".

#include <iosfwd>
#include <string>
#include <vector>

#include "exporter/qos/policy.h"

namespace roceqos {

inline constexpr int kPolicyValid = 0;    // the daemon would load it
inline constexpr int kPolicyInvalid = 1;  // the daemon would refuse it (the error says where)

/// Rules that can never apply whatever the devices: an earlier rule's selector matches every
/// device the later one does (each criterion the earlier rule has, the later one has with the same
/// value), and the first matching rule wins. One line each, "<source>:<line>: warning: ...".
std::vector<std::string> UnreachableRuleWarnings(const PolicySet& policy);

/// Loads `path` as the daemon does (LoadPolicyFile: size bound, YAML, every field's range and the
/// cross-field rules, errors as "<path>:<line>:<column>: <what>"). Valid: "<path>: OK ..." and any
/// warnings on `out`, kPolicyValid. Invalid: the error on `err`, kPolicyInvalid.
int RunPolicyValidate(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace roceqos
