#include "exporter/qos/policy.h"

// A policy back as YAML text: `policy show-default`, `check`, and the input of PolicyFingerprint.

#include <fmt/format.h>

namespace roceqos {
namespace {

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string PriorityListText(uint8_t mask) {
  std::string out = "[";
  for (int p = 0; p < kNumPriorities; ++p)
    if (mask & (1u << p)) out += fmt::format("{}{}", out.size() > 1 ? ", " : "", p);
  return out + "]";
}

std::string DcqcnParamsText(const QosPolicy& p) {
  if (p.dcqcn_rp_params.empty() && p.dcqcn_np_params.empty()) return "null";
  auto role = [](const std::map<std::string, uint64_t>& params) {
    if (params.empty()) return std::string("null");
    std::string out = "{";
    for (const auto& [name, value] : params)
      out += fmt::format("{}{}: {}", out.size() > 1 ? ", " : "", name, value);
    return out + "}";
  };
  return fmt::format("{{roce_rp: {}, roce_np: {}}}", role(p.dcqcn_rp_params),
                     role(p.dcqcn_np_params));
}

std::string RenderQosPolicyYaml(const QosPolicy& p, int indent) {
  std::string pad(static_cast<size_t>(indent), ' ');
  std::string out;
  auto line = [&](std::string_view key, const std::string& value) {
    out += fmt::format("{}{}: {}\n", pad, key, value);
  };
  line("trust", p.trust ? std::string(TrustModeName(*p.trust)) : "null");
  line("pfc", p.pfc ? PriorityListText(*p.pfc) : "null");
  if (p.dscp_prio) {
    std::string m = "{";
    for (const auto& [dscp, prio] : *p.dscp_prio)
      m += fmt::format("{}{}: {}", m.size() > 1 ? ", " : "", dscp, prio);
    line("dscp_prio", m + "}");
  } else {
    line("dscp_prio", "null");
  }
  line("prio_tc", p.prio_tc ? ArrayText(*p.prio_tc) : "null");
  if (p.ets) {
    line("ets", fmt::format("{{tsa: {}, bandwidth: {}}}", TsaListText(p.ets->tsa),
                            ArrayText(p.ets->bandwidth)));
  } else {
    line("ets", "null");
  }
  if (p.buffer) {
    line("buffer", fmt::format("{{prio_buffer: {}, size: {}}}", ArrayText(p.buffer->prio_buffer),
                               p.buffer->size ? ArrayText(*p.buffer->size) : "null"));
  } else {
    line("buffer", "null");
  }
  line("roce_tos", p.roce_tos ? std::to_string(*p.roce_tos) : "null");
  if (p.dcqcn_np || p.dcqcn_rp) {
    line("dcqcn",
         fmt::format("{{np: {}, rp: {}}}", p.dcqcn_np ? PriorityListText(*p.dcqcn_np) : "null",
                     p.dcqcn_rp ? PriorityListText(*p.dcqcn_rp) : "null"));
  } else {
    line("dcqcn", "null");
  }
  line("tcp_ecn", p.tcp_ecn ? std::to_string(*p.tcp_ecn) : "null");
  line("mtu", p.mtu ? std::to_string(*p.mtu) : "null");
  line("link_speed_min_mbps",
       p.link_speed_min_mbps ? std::to_string(*p.link_speed_min_mbps) : "null");
  line("sriov_numvfs", p.sriov_numvfs ? std::to_string(*p.sriov_numvfs) : "null");
  // CNP marking and DCQCN parameters
  line("cnp_dscp", p.cnp_dscp ? std::to_string(*p.cnp_dscp) : "null");
  line("cnp_802p_prio", p.cnp_802p_prio ? std::to_string(*p.cnp_802p_prio) : "null");
  line("dcqcn_params", DcqcnParamsText(p));
  return out;
}

std::string RenderPolicyYaml(const PolicySet& set) {
  std::string out =
      "# roce_qos_exporter QoS policy (reference: docs/policy.md).\n"
      "# null = unchecked: no drift series and never remediated.\n"
      "version: 1\n"
      "# auto: the defaults check RoCE ports only (configured, carrying RoCE, or in sync\n"
      "# before); all: every port they apply to. A devices: rule always checks its ports.\n";
  out += fmt::format("roce_ports: {}\n", RocePortsName(set.roce_ports));
  out += "defaults:\n";
  out += RenderQosPolicyYaml(set.defaults, 2);
  if (set.rules.empty()) {
    out += "# Per-device overrides; the first rule whose match fits a device wins.\n";
    out += "devices: []\n";
    return out;
  }
  out += "devices:\n";
  for (const auto& rule : set.rules) {
    out += fmt::format("  - name: {}\n    match: {{", Quote(rule.name));
    std::string sel;
    if (rule.match.netdev_regex) sel += "netdev: " + Quote(*rule.match.netdev_regex);
    if (rule.match.pci)
      sel += (sel.empty() ? "" : ", ") + std::string("pci: ") + Quote(*rule.match.pci);
    if (rule.match.rdma_device)
      sel +=
          (sel.empty() ? "" : ", ") + std::string("rdma_device: ") + Quote(*rule.match.rdma_device);
    out += sel + "}\n    policy:\n";
    std::string fields = RenderQosPolicyYaml(rule.policy, 6);
    // tcp_ecn is host-wide: a rule inherits it from defaults and may only uncheck it (null).
    if (rule.policy.tcp_ecn) {
      const std::string inherited = fmt::format("      tcp_ecn: {}\n", *rule.policy.tcp_ecn);
      if (auto at = fields.find(inherited); at != std::string::npos)
        fields.erase(at, inherited.size());
    }
    out += fields;
  }
  return out;
}

std::string TsaListText(const std::array<uint8_t, kNumTcs>& tsa) {
  std::string out = "[";
  for (int tc = 0; tc < kNumTcs; ++tc) out += fmt::format("{}{}", tc ? ", " : "", TsaName(tsa[tc]));
  return out + "]";
}

}  // namespace roceqos
