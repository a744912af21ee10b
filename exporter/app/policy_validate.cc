#include "exporter/app/policy_validate.h"

#include <fmt/format.h>

#include <optional>
#include <ostream>

namespace roceqos {
namespace {

// Whether `earlier` matches every device `later` matches: each criterion of `earlier` is also a
// criterion of `later`, with the same value. (A rule that cannot be decided for a device, one that
// names an RDMA device of a device whose RDMA ports are unknown, stops the resolution there as
// well, so it shadows the same rules.)
bool Covers(const PolicyMatch& earlier, const PolicyMatch& later) {
  auto covered = [](const std::optional<std::string>& e, const std::optional<std::string>& l) {
    return !e || (l && *e == *l);
  };
  return covered(earlier.netdev_regex, later.netdev_regex) && covered(earlier.pci, later.pci) &&
         covered(earlier.rdma_device, later.rdma_device);
}

std::string RuleSummary(const PolicySet& policy) {
  if (policy.rules.empty()) return "defaults, no device rules";
  std::string names;
  for (const PolicyRule& rule : policy.rules) {
    names += fmt::format("{}\"{}\" at line {}", names.empty() ? "" : ", ", rule.name, rule.line);
  }
  return fmt::format("defaults and {} device rule{}: {}", policy.rules.size(),
                     policy.rules.size() == 1 ? "" : "s", names);
}

}  // namespace

std::vector<std::string> UnreachableRuleWarnings(const PolicySet& policy) {
  std::vector<std::string> warnings;
  for (size_t later = 0; later < policy.rules.size(); ++later) {
    for (size_t earlier = 0; earlier < later; ++earlier) {
      const PolicyRule& e = policy.rules[earlier];
      const PolicyRule& l = policy.rules[later];
      if (!Covers(e.match, l.match)) continue;
      warnings.push_back(fmt::format(
          "{}:{}: warning: rule \"{}\" never applies: rule \"{}\" (line {}) comes first and "
          "matches every device it matches",
          policy.source, l.line, l.name, e.name, e.line));
      break;
    }
  }
  return warnings;
}

int RunPolicyValidate(const std::string& path, std::ostream& out, std::ostream& err) {
  Result<PolicySet> policy = LoadPolicyFile(path);
  if (!policy) {
    err << policy.error().message << "\n";
    return kPolicyInvalid;
  }
  out << fmt::format("{}: OK ({})\n", path, RuleSummary(*policy));
  for (const std::string& warning : UnreachableRuleWarnings(*policy)) out << warning << "\n";
  return kPolicyValid;
}

}  // namespace roceqos
