#include "exporter/qos/policy.h"

// Which policy applies to a device: the first matching rule, the defaults, or nothing.

#include <regex>

namespace roceqos {

namespace {

bool MatchesNetdevAndPci(const PolicyMatch& match, const Device& device) {
  if (match.netdev_regex) {
    if (!match.netdev_compiled || !std::regex_match(device.name, *match.netdev_compiled))
      return false;
  }
  return !match.pci || device.pci_address == *match.pci;
}

}  // namespace

std::string_view RocePortsName(RocePorts mode) { return mode == RocePorts::kAll ? "all" : "auto"; }

bool PolicyMatch::Matches(const Device& device) const {
  if (!MatchesNetdevAndPci(*this, device)) return false;
  if (rdma_device) {
    bool found = false;
    for (const auto& port : device.rdma_ports) found |= port.device == *rdma_device;
    if (!found) return false;
  }
  return netdev_regex || pci || rdma_device;
}

bool PolicyMatch::Undecidable(const Device& device) const {
  if (!rdma_device || !MatchesNetdevAndPci(*this, device)) return false;
  // A Mellanox PF always has an RDMA port once mlx5_ib is bound: none listed means mlx5_ib is
  // unloaded or re-registering, so whether the rule matches cannot be told (issue 37, finding 3).
  const bool rdma_port_missing = device.rdma_ports.empty() && DefaultsApplyTo(device);
  return !device.rdma_ports_known || rdma_port_missing;
}

bool DefaultsApplyTo(const Device& device) {
  // DCB, buffers and DCQCN are configured on the Mellanox physical function (also when it is a
  // bond member); a VF, a bond master or a Soft-RoCE netdev has none of it to check.
  return device.pci_vendor == 0x15b3 &&
         (device.role == DeviceRole::kPf || device.role == DeviceRole::kBondMember);
}

PolicyResolution PolicySet::ResolveChecked(const Device& device) const {
  static const QosPolicy kNothingChecked;
  for (const auto& rule : rules) {
    // First match wins, so a rule that cannot be decided leaves every later choice open too.
    if (rule.match.Undecidable(device))
      return {&kNothingChecked, kUnresolvedRule, false, rule.name};
    if (rule.match.Matches(device)) return {&rule.policy, rule.name, true, {}};
  }
  if (DefaultsApplyTo(device)) return {&defaults, "default", true, {}};
  return {&kNothingChecked, "none", true, {}};
}

std::pair<const QosPolicy*, std::string_view> PolicySet::Resolve(const Device& device) const {
  PolicyResolution resolution = ResolveChecked(device);
  return {resolution.policy, resolution.rule};
}

}  // namespace roceqos
