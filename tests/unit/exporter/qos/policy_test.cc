#include "exporter/qos/policy.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <vector>

namespace roceqos {
namespace {

// A Mellanox physical function: the devices the defaults apply to.
Device MakeDevice(std::string name, std::string pci = "", std::string rdma = "") {
  Device d;
  d.name = std::move(name);
  d.pci_address = std::move(pci);
  d.pci_vendor = 0x15b3;
  d.role = DeviceRole::kPf;
  if (!rdma.empty()) {
    RdmaPort port;
    port.device = std::move(rdma);
    port.port = 1;
    d.rdma_ports.push_back(port);
  }
  return d;
}

TEST(DefaultPolicy, IsTheStandardLosslessRoceV2Policy) {
  QosPolicy p = DefaultPolicy().defaults;
  EXPECT_EQ(p.trust, TrustMode::kDscp);
  EXPECT_EQ(p.pfc, 0x08);
  EXPECT_EQ(p.dscp_prio, (std::map<uint8_t, uint8_t>{{24, 3}, {26, 3}, {48, 6}}));
  EXPECT_EQ(p.roce_tos, 106);
  EXPECT_EQ(p.dcqcn_np, 0x08);
  EXPECT_EQ(p.dcqcn_rp, 0x08);
  EXPECT_EQ(p.tcp_ecn, 1);
  EXPECT_FALSE(p.ets);
  EXPECT_FALSE(p.prio_tc);
  EXPECT_FALSE(p.buffer);
  EXPECT_FALSE(p.mtu);
  EXPECT_EQ(p.cnp_dscp, 48);
  EXPECT_EQ(p.cnp_802p_prio, 6);
  EXPECT_TRUE(p.dcqcn_rp_params.empty()) << "site-specific: unchecked by default";
  EXPECT_TRUE(p.dcqcn_np_params.empty());
}

TEST(PolicyYaml, ShowDefaultRoundTripsThroughTheParser) {
  std::string text = RenderPolicyYaml(DefaultPolicy());
  auto parsed = ParsePolicy(text, "show-default");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message << "\n" << text;
  EXPECT_EQ(parsed->defaults, DefaultPolicy().defaults);
  EXPECT_TRUE(parsed->rules.empty());
}

TEST(PolicyYaml, EveryFieldRoundTripsIncludingRules) {
  const char* text = R"(
version: 1
defaults:
  trust: dscp
  pfc: [3, 4]
  dscp_prio: {26: 3, 46: 5}
  prio_tc: [0, 1, 2, 3, 4, 5, 6, 7]
  ets: {tsa: [ets, ets, ets, ets, strict, strict, strict, strict], bandwidth: [9, 1, 80, 10, 0, 0, 0, 0]}
  buffer: {prio_buffer: [0, 0, 0, 1, 0, 0, 0, 0], size: [32768, 229120, 0, 0, 0, 0, 0, 0]}
  roce_tos: 162
  dcqcn: {np: [3, 4], rp: [3]}
  tcp_ecn: 2
  mtu: 4200
  link_speed_min_mbps: 200000
  sriov_numvfs: 8
  cnp_dscp: 46
  cnp_802p_prio: 5
  dcqcn_params: {roce_rp: {rpg_ai_rate: 10, rpg_time_reset: 100}, roce_np: {min_time_between_cnps: 0}}
devices:
  - name: "storage \"fast\" path"
    match: {netdev: "ens1f[0-9]np0", pci: "0000:3b:00.0"}
    policy: {pfc: [5], mtu: null, sriov_numvfs: 0}
)";
  auto first = ParsePolicy(text, "in.yaml");
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto second = ParsePolicy(RenderPolicyYaml(*first), "out.yaml");
  ASSERT_TRUE(second.ok()) << second.error().message << "\n" << RenderPolicyYaml(*first);
  EXPECT_EQ(second->defaults, first->defaults);
  ASSERT_EQ(second->rules.size(), 1u);
  EXPECT_EQ(second->rules[0].name, "storage \"fast\" path");
  EXPECT_EQ(second->rules[0].match, first->rules[0].match);
  EXPECT_EQ(second->rules[0].policy, first->rules[0].policy);
  EXPECT_EQ(first->defaults.ets->bandwidth[2], 80);
  EXPECT_EQ(first->defaults.link_speed_min_mbps, 200000u);
  EXPECT_EQ(first->defaults.sriov_numvfs, 8u);
  EXPECT_EQ(first->rules[0].policy.sriov_numvfs, 0u) << "a rule overrides the VF count";
  EXPECT_EQ(first->rules[0].policy.link_speed_min_mbps, 200000u) << "and inherits the minimum";
  EXPECT_EQ(first->defaults.ets->tsa[4], IEEE_8021QAZ_TSA_STRICT);
  EXPECT_EQ((*first->defaults.buffer->size)[1], 229120u);
  EXPECT_EQ(first->defaults.cnp_dscp, 46);
  EXPECT_EQ(first->defaults.dcqcn_rp_params.at("rpg_time_reset"), 100u);
  EXPECT_EQ(first->defaults.dcqcn_np_params.at("min_time_between_cnps"), 0u);
}

TEST(PolicyYaml, DcqcnParamsMergePerParameterAndNullUnchecks) {
  const char* text = R"(
defaults:
  dcqcn_params:
    roce_rp: {rpg_ai_rate: 5, rpg_hai_rate: 50}
    roce_np: {min_time_between_cnps: 4}
devices:
  - match: {netdev: a}
    policy: {dcqcn_params: {roce_rp: {rpg_ai_rate: 10, rpg_hai_rate: null}}}
  - match: {netdev: b}
    policy: {dcqcn_params: {roce_np: null}}
  - match: {netdev: c}
    policy: {dcqcn_params: null, cnp_dscp: null}
)";
  auto parsed = ParsePolicy(text, "p.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  using Params = std::map<std::string, uint64_t>;
  EXPECT_EQ(parsed->defaults.dcqcn_rp_params, (Params{{"rpg_ai_rate", 5}, {"rpg_hai_rate", 50}}));
  EXPECT_EQ(parsed->rules[0].policy.dcqcn_rp_params, (Params{{"rpg_ai_rate", 10}}));
  EXPECT_EQ(parsed->rules[0].policy.dcqcn_np_params, (Params{{"min_time_between_cnps", 4}}));
  EXPECT_TRUE(parsed->rules[1].policy.dcqcn_np_params.empty());
  EXPECT_EQ(parsed->rules[1].policy.dcqcn_rp_params.size(), 2u);
  EXPECT_TRUE(parsed->rules[2].policy.dcqcn_rp_params.empty());
  EXPECT_FALSE(parsed->rules[2].policy.cnp_dscp);
  EXPECT_EQ(parsed->rules[2].policy.cnp_802p_prio, 6) << "inherited from the embedded default";
}

TEST(PolicyYaml, TheShippedExamplePolicyIsValid) {
  auto parsed =
      LoadPolicyFile(std::string(ROCEQOS_SOURCE_DIR) + "/deploy/policy/policy.example.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->defaults.cnp_dscp, 48);
  EXPECT_FALSE(parsed->defaults.dcqcn_rp_params.empty());
}

TEST(PolicyYaml, FileOverridesOnlyTheKeysItNamesAndNullUnchecks) {
  auto parsed =
      ParsePolicy("defaults:\n  pfc: [5]\n  dscp_prio: null\n  tcp_ecn: unchecked\n", "p.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const QosPolicy& p = parsed->defaults;
  EXPECT_EQ(p.pfc, 0x20);
  EXPECT_FALSE(p.dscp_prio);
  EXPECT_FALSE(p.tcp_ecn);
  EXPECT_EQ(p.trust, TrustMode::kDscp);  // inherited from the embedded default
  EXPECT_EQ(p.roce_tos, 106);
}

TEST(PolicyYaml, DcqcnRolesMergeSeparately) {
  auto parsed = ParsePolicy("defaults:\n  dcqcn: {rp: null}\n", "p.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->defaults.dcqcn_np, 0x08);
  EXPECT_FALSE(parsed->defaults.dcqcn_rp);
  parsed = ParsePolicy("defaults:\n  dcqcn: null\n", "p.yaml");
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->defaults.dcqcn_np);
  EXPECT_FALSE(parsed->defaults.dcqcn_rp);
}

TEST(PolicyYaml, EmptyPriorityListMeansPfcOffEverywhere) {
  auto parsed = ParsePolicy("defaults: {pfc: []}\n", "p.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->defaults.pfc, 0);
}

TEST(PolicySelection, FirstMatchingRuleWinsAndInheritsTheFileDefaults) {
  const char* text = R"(
defaults:
  pfc: [4]
devices:
  - name: by-pci
    match: {pci: "0000:3b:00.0"}
    policy: {pfc: [5]}
  - name: by-netdev
    match: {netdev: "ens1f.*"}
    policy: {roce_tos: 96}
  - name: by-rdma
    match: {rdma_device: mlx5_bond_0}
  - name: both
    match: {netdev: "eth.*", rdma_device: mlx5_9}
    policy: {mtu: 9000}
)";
  auto set = ParsePolicy(text, "sel.yaml");
  ASSERT_TRUE(set.ok()) << set.error().message;

  // Matches both rule 1 and rule 2: the first wins, nothing of rule 2 applies.
  auto [p1, r1] = set->Resolve(MakeDevice("ens1f0np0", "0000:3b:00.0"));
  EXPECT_EQ(r1, "by-pci");
  EXPECT_EQ(p1->pfc, 0x20);
  EXPECT_EQ(p1->roce_tos, 106);

  auto [p2, r2] = set->Resolve(MakeDevice("ens1f1np1", "0000:3b:00.1"));
  EXPECT_EQ(r2, "by-netdev");
  EXPECT_EQ(p2->pfc, 0x10);  // from the file's defaults
  EXPECT_EQ(p2->roce_tos, 96);

  // The netdev regex must match the whole name.
  // (A Mellanox PF has an RDMA port; without one an rdma_device rule cannot be decided.)
  EXPECT_EQ(set->Resolve(MakeDevice("xens1f0", "", "mlx5_7")).second, "default");
  EXPECT_EQ(set->Resolve(MakeDevice("ens2f0np0", "", "mlx5_bond_0")).second, "by-rdma");

  // All criteria of a selector must match.
  EXPECT_EQ(set->Resolve(MakeDevice("eth3", "", "mlx5_1")).second, "default");
  auto [p4, r4] = set->Resolve(MakeDevice("eth3", "", "mlx5_9"));
  EXPECT_EQ(r4, "both");
  EXPECT_EQ(p4->mtu, 9000u);

  auto [pd, rd] = set->Resolve(MakeDevice("ib0", "", "mlx5_8"));
  EXPECT_EQ(rd, "default");
  EXPECT_EQ(pd->pfc, 0x10);
}

// With the RDMA port listing failed (Device::rdma_ports_known false), a rule naming an RDMA device
// that is tried before the match is decided cannot be evaluated: the device has no effective
// policy instead of silently falling back to a later rule or the defaults.
TEST(PolicySelection, ARdmaRuleIsUnresolvedWhileTheRdmaPortsAreUnknown) {
  auto set = ParsePolicy(R"(defaults: {pfc: [4]}
devices:
  - name: by-pci
    match: {pci: "0000:3b:00.0"}
    policy: {pfc: [5]}
  - name: storage-rdma
    match: {netdev: "ens1.*", rdma_device: mlx5_1}
    policy: {pfc: [3]}
  - name: by-netdev
    match: {netdev: "ens.*"}
    policy: {pfc: [6]}
)",
                         "rdma.yaml");
  ASSERT_TRUE(set.ok()) << set.error().message;
  Device unknown = MakeDevice("ens1f1np1", "0000:3b:00.1");
  unknown.rdma_ports_known = false;
  PolicyResolution r = set->ResolveChecked(unknown);
  EXPECT_FALSE(r.resolved);
  EXPECT_EQ(r.rule, "unresolved");
  EXPECT_EQ(r.undecided_rule, "storage-rdma");
  EXPECT_EQ(*r.policy, QosPolicy{}) << "nothing checked, nothing written";
  auto [policy, rule] = set->Resolve(unknown);  // the two-value form says so too
  EXPECT_EQ(rule, "unresolved");
  EXPECT_EQ(*policy, QosPolicy{});

  // A rule decided before the RDMA rule, or an RDMA rule whose other criteria do not match,
  // does not depend on the RDMA ports.
  Device first = MakeDevice("ens1f0np0", "0000:3b:00.0");
  first.rdma_ports_known = false;
  EXPECT_EQ(set->ResolveChecked(first).rule, "by-pci");
  EXPECT_TRUE(set->ResolveChecked(first).resolved);
  Device other = MakeDevice("ens2f0np0", "0000:5e:00.0");
  other.rdma_ports_known = false;
  EXPECT_EQ(set->ResolveChecked(other).rule, "by-netdev");
  Device eth = MakeDevice("eth0", "0000:5e:00.1");
  eth.rdma_ports_known = false;
  EXPECT_EQ(set->ResolveChecked(eth).rule, "default");

  // Known ports: the rule is decided either way.
  Device known = MakeDevice("ens1f1np1", "0000:3b:00.1", "mlx5_1");
  EXPECT_EQ(set->ResolveChecked(known).rule, "storage-rdma");
  EXPECT_TRUE(set->ResolveChecked(known).resolved);
  // Issue 37, finding 3: the listing succeeded but the Mellanox PF has no RDMA port (mlx5_ib
  // unloaded, an IB re-registration): the rule cannot be decided, no fallback to a later rule.
  known.rdma_ports.clear();
  EXPECT_FALSE(set->ResolveChecked(known).resolved);
  EXPECT_EQ(set->ResolveChecked(known).undecided_rule, "storage-rdma");
  // A netdev of another vendor never has one: the rule does not match it.
  known.pci_vendor = 0x8086;
  EXPECT_EQ(set->ResolveChecked(known).rule, "by-netdev");
}

TEST(PolicySelection, DefaultsApplyToMellanoxPhysicalFunctionsOnly) {
  PolicySet set = DefaultPolicy();
  Device pf = MakeDevice("ens1f0np0");
  EXPECT_EQ(set.Resolve(pf).second, "default");
  Device member = pf;
  member.role = DeviceRole::kBondMember;
  EXPECT_EQ(set.Resolve(member).second, "default") << "DCB lives on each slave PF";
  for (auto change : std::vector<std::function<void(Device&)>>{
           [](Device& d) { d.role = DeviceRole::kVf; },
           [](Device& d) { d.role = DeviceRole::kBond; },
           [](Device& d) { d.role = DeviceRole::kOther; },  // veth under Soft-RoCE
           [](Device& d) { d.pci_vendor = 0x8086; }}) {     // another vendor's PF
    Device d = pf;
    change(d);
    auto [policy, rule] = set.Resolve(d);
    EXPECT_EQ(rule, "none");
    EXPECT_EQ(*policy, QosPolicy{}) << "nothing checked";
  }
  // An explicit rule checks any device.
  auto with_rule = ParsePolicy("devices:\n  - {name: soft, match: {netdev: veth0}}\n", "r.yaml");
  ASSERT_TRUE(with_rule.ok()) << with_rule.error().message;
  Device veth;
  veth.name = "veth0";
  EXPECT_EQ(with_rule->Resolve(veth).second, "soft");
  EXPECT_EQ(with_rule->Resolve(veth).first->pfc, 0x08);
}

TEST(PolicyFingerprint, EqualPoliciesHashEqualDifferentOnesDiffer) {
  QosPolicy a = DefaultPolicy().defaults;
  QosPolicy b = DefaultPolicy().defaults;
  EXPECT_EQ(PolicyFingerprint(a), PolicyFingerprint(b));
  EXPECT_EQ(PolicyFingerprint(a).size(), 16u);
  b.pfc = 0x10;
  EXPECT_NE(PolicyFingerprint(a), PolicyFingerprint(b));
  b = a;
  b.tcp_ecn.reset();
  EXPECT_NE(PolicyFingerprint(a), PolicyFingerprint(b));
}

// ---------------------------------------------------------------------------------------------
// Every rejected document: an error "<file>:<line>:<column>: <what>" and no policy.

struct BadCase {
  const char* name;
  const char* yaml;
  const char* position;  // "file:line:col"
  const char* what;      // substring of the message
};

class PolicyRejects : public testing::TestWithParam<BadCase> {};

TEST_P(PolicyRejects, WithFileLineAndReason) {
  auto parsed = ParsePolicy(GetParam().yaml, "bad.yaml");
  ASSERT_FALSE(parsed.ok()) << GetParam().name;
  const std::string& msg = parsed.error().message;
  EXPECT_EQ(msg.rfind(GetParam().position, 0), 0u) << msg;
  EXPECT_NE(msg.find(GetParam().what), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PolicyRejects,
    testing::Values(
        BadCase{"empty", "", "bad.yaml:1:1:", "empty policy"},
        BadCase{"comments_only", "# nothing\n# here\n", "bad.yaml:", "empty policy"},
        BadCase{"malformed_flow", "defaults:\n  pfc: [3\n", "bad.yaml:", "malformed YAML"},
        BadCase{"malformed_indent", "defaults:\n  pfc: [3]\n trust: dscp\n",
                "bad.yaml:3:", "malformed YAML"},
        BadCase{"not_a_mapping", "- 1\n- 2\n", "bad.yaml:1:1:", "must be a mapping"},
        BadCase{"unknown_top_key", "version: 1\ndefault:\n  pfc: [3]\n",
                "bad.yaml:2:1:", "unknown key \"default\""},
        BadCase{"unknown_policy_key", "defaults:\n  pfc: [3]\n  pcf: [3]\n",
                "bad.yaml:3:3:", "unknown key \"pcf\""},
        BadCase{"unknown_nested_key", "defaults:\n  dcqcn: {np: [3], xp: [3]}\n",
                "bad.yaml:2:", "unknown key \"xp\""},
        BadCase{"duplicate_key", "defaults:\n  pfc: [3]\n  pfc: [4]\n",
                "bad.yaml:3:3:", "duplicate key \"pfc\""},
        BadCase{"pfc_string", "defaults:\n  pfc: \"3\"\n", "bad.yaml:2:8:", "must be a list"},
        BadCase{"pfc_quoted_item", "defaults:\n  pfc: [\"3\"]\n",
                "bad.yaml:2:9:", "must be an integer, got a string"},
        BadCase{"pfc_float", "defaults:\n  pfc: [3.5]\n",
                "bad.yaml:2:9:", "must be an integer, got \"3.5\""},
        BadCase{"pfc_out_of_range", "defaults:\n  pfc: [3, 8]\n",
                "bad.yaml:2:12:", "priority 8 is out of range 0..7"},
        BadCase{"pfc_negative", "defaults:\n  pfc: [-1]\n", "bad.yaml:2:9:", "out of range 0..7"},
        BadCase{"pfc_twice", "defaults:\n  pfc: [3, 3]\n", "bad.yaml:2:12:", "listed twice"},
        BadCase{"trust_word", "defaults:\n  trust: dcsp\n",
                "bad.yaml:2:10:", "trust must be dscp, pcp or null"},
        BadCase{"trust_number", "defaults:\n  trust: 5\n", "bad.yaml:2:10:", "trust must be"},
        BadCase{"trust_pcp_with_map", "defaults:\n  trust: pcp\n",
                "bad.yaml:2:3:", "dscp_prio needs trust dscp"},
        BadCase{"rule_map_under_pcp",
                "defaults: {trust: pcp, dscp_prio: null}\ndevices:\n  - match: {netdev: x}\n"
                "    policy: {dscp_prio: {26: 3}}\n",
                "bad.yaml:4:13:", "devices[0].policy: dscp_prio needs trust dscp"},
        BadCase{"tcp_ecn_in_rule",
                "defaults: {tcp_ecn: 1}\ndevices:\n  - match: {netdev: x}\n"
                "    policy:\n      tcp_ecn: 2\n",
                "bad.yaml:5:7:", "devices[0].policy: tcp_ecn is host-wide"},
        BadCase{"tcp_ecn_in_rule_same_value",
                "devices:\n  - match: {netdev: x}\n    policy: {pfc: [3], tcp_ecn: 1}\n",
                "bad.yaml:3:24:", "set it under defaults"},
        BadCase{"dscp_out_of_range", "defaults:\n  dscp_prio: {26: 3, 64: 3}\n",
                "bad.yaml:2:22:", "DSCP 64 is out of range 0..63"},
        BadCase{"dscp_prio_out_of_range", "defaults:\n  dscp_prio: {26: 9}\n",
                "bad.yaml:2:19:", "priority 9 is out of range 0..7"},
        BadCase{"dscp_map_is_list", "defaults:\n  dscp_prio: [26, 3]\n",
                "bad.yaml:2:14:", "dscp_prio must be a mapping, got a list"},
        BadCase{"dscp_twice", "defaults:\n  dscp_prio: {26: 3, 26: 4}\n",
                "bad.yaml:2:", "listed twice"},
        BadCase{"prio_tc_short", "defaults:\n  prio_tc: [0, 1, 2]\n",
                "bad.yaml:2:12:", "exactly 8 entries, got 3"},
        BadCase{"prio_tc_range", "defaults:\n  prio_tc: [0, 1, 2, 3, 4, 5, 6, 8]\n",
                "bad.yaml:2:34:", "TC 8 is out of range"},
        BadCase{"ets_sum",
                "defaults:\n  ets:\n    tsa: [ets, ets, ets, ets, ets, ets, ets, ets]\n"
                "    bandwidth: [10, 10, 10, 10, 10, 10, 10, 20]\n",
                "bad.yaml:3:5:", "sums to 90, must be 100"},
        BadCase{"ets_bw_on_strict",
                "defaults:\n  ets: {tsa: [ets, strict, strict, strict, strict, strict, strict, "
                "strict], bandwidth: [90, 10, 0, 0, 0, 0, 0, 0]}\n",
                "bad.yaml:2:8:", "TC 1 is not an ETS TC"},
        BadCase{"ets_tsa_word",
                "defaults:\n  ets: {tsa: [ets, wrr, ets, ets, ets, ets, ets, ets], bandwidth: "
                "[100, 0, 0, 0, 0, 0, 0, 0]}\n",
                "bad.yaml:2:", "ets.tsa[1] must be one of"},
        BadCase{"ets_half", "defaults:\n  ets: {bandwidth: [100, 0, 0, 0, 0, 0, 0, 0]}\n",
                "bad.yaml:2:8:", "needs both tsa and bandwidth"},
        BadCase{"buffer_no_map", "defaults:\n  buffer: {size: [1, 2, 3, 4, 5, 6, 7, 8]}\n",
                "bad.yaml:2:11:", "needs prio_buffer"},
        BadCase{"tos_range", "defaults:\n  roce_tos: 256\n",
                "bad.yaml:2:13:", "roce_tos 256 is out of range 0..255"},
        BadCase{"tos_huge", "defaults:\n  roce_tos: 99999999999999999999\n",
                "bad.yaml:2:13:", "out of range"},
        BadCase{"tcp_ecn_range", "defaults:\n  tcp_ecn: 3\n",
                "bad.yaml:2:12:", "out of range 0..2"},
        BadCase{"tcp_ecn_bool", "defaults:\n  tcp_ecn: true\n",
                "bad.yaml:2:12:", "must be an integer"},
        BadCase{"mtu_range", "defaults:\n  mtu: 10\n", "bad.yaml:2:8:", "mtu 10 is out of range"},
        BadCase{"speed_zero", "defaults:\n  link_speed_min_mbps: 0\n",
                "bad.yaml:2:24:", "link_speed_min_mbps 0 is out of range 1..10000000"},
        BadCase{"speed_text", "defaults:\n  link_speed_min_mbps: 100G\n",
                "bad.yaml:2:24:", "must be an integer"},
        BadCase{"vfs_negative", "defaults:\n  sriov_numvfs: -1\n",
                "bad.yaml:2:17:", "sriov_numvfs -1 is out of range 0..65535"},
        BadCase{"version", "version: 2\n", "bad.yaml:1:10:", "version 2 is out of range"},
        BadCase{"devices_map", "devices: {a: 1}\n", "bad.yaml:1:10:", "devices must be a list"},
        BadCase{"rule_no_match", "devices:\n  - name: x\n    policy: {pfc: [3]}\n",
                "bad.yaml:2:5:", "needs a match"},
        BadCase{"rule_empty_match", "devices:\n  - match: {}\n",
                "bad.yaml:2:12:", "needs at least one of netdev, pci, rdma_device"},
        BadCase{"rule_bad_regex", "devices:\n  - match: {netdev: \"ens[\"}\n",
                "bad.yaml:2:21:", "invalid regex \"ens[\": an unbalanced [ or ]"},
        BadCase{"rule_bad_pci", "devices:\n  - match: {pci: \"3b:00.0\"}\n",
                "bad.yaml:2:18:", "not a PCI address"},
        BadCase{"rule_bad_policy_value",
                "devices:\n  - match: {netdev: eth0}\n    policy:\n      pfc: [9]\n",
                "bad.yaml:4:13:", "out of range 0..7"},
        BadCase{"rule_unknown_key", "devices:\n  - match: {netdev: eth0}\n    polcy: {}\n",
                "bad.yaml:3:5:", "unknown key \"polcy\""},
        BadCase{"rule_names_twice",
                "devices:\n  - {name: a, match: {netdev: x}}\n  - {name: a, match: {netdev: y}}\n",
                "bad.yaml:3:5:", "rule name \"a\" used twice"},
        BadCase{"cnp_dscp_range", "defaults:\n  cnp_dscp: 64\n",
                "bad.yaml:2:13:", "cnp_dscp 64 is out of range 0..63"},
        BadCase{"cnp_prio_range", "defaults:\n  cnp_802p_prio: 8\n",
                "bad.yaml:2:18:", "out of range 0..7"},
        BadCase{"dcqcn_param_unknown", "defaults:\n  dcqcn_params: {roce_rp: {rpg_ai_rat: 5}}\n",
                "bad.yaml:2:28:", "unknown key \"rpg_ai_rat\""},
        BadCase{"dcqcn_param_cnp_in_np", "defaults:\n  dcqcn_params: {roce_np: {cnp_dscp: 48}}\n",
                "bad.yaml:2:28:", "unknown key \"cnp_dscp\""},
        BadCase{"dcqcn_param_role", "defaults:\n  dcqcn_params: {roce_xp: {}}\n",
                "bad.yaml:2:18:", "unknown key \"roce_xp\""},
        BadCase{"dcqcn_param_range",
                "defaults:\n  dcqcn_params: {roce_rp: {rpg_ai_rate: 4294967296}}\n",
                "bad.yaml:2:41:", "out of range 0..4294967295"},
        BadCase{"dcqcn_param_negative", "defaults:\n  dcqcn_params: {roce_rp: {rpg_gd: -1}}\n",
                "bad.yaml:2:36:", "out of range"},
        BadCase{"two_documents", "defaults: {pfc: [3]}\n---\ndefaults: {pfc: [4]}\n",
                "bad.yaml:3:", "more than one YAML document"},
        // A ',' outside any flow collection: yaml-cpp 0.7's LoadAll loops on it forever
        // (LoadSingleDocument in policy.cc; the fuzz reproducers are in PolicyFuzzFindings).
        BadCase{"stray_comma", ",[8]}\n", "bad.yaml:1:1:", "malformed YAML: unexpected ','"},
        BadCase{"stray_comma_alone", ",", "bad.yaml:1:1:", "malformed YAML: unexpected ','"},
        BadCase{"stray_comma_after_document", "defaults: {pfc: [3]}\n---\n,\n",
                "bad.yaml:3:1:", "more than one YAML document"}),
    [](const testing::TestParamInfo<BadCase>& param) { return std::string(param.param.name); });

// The policy_fuzz findings (tests/fixtures/fuzz/README.md): each once kept yaml-cpp 0.7's
// YAML::LoadAll looping (and allocating) forever. The loader must answer with an error instead.
// A regression would hang, so the parse runs on its own thread under a deadline far above its
// cost (microseconds); past it the process ends with a message rather than stalling the suite.
TEST(PolicyFuzzFindings, HostileDocumentsAreRejectedNotLooped) {
  for (const char* name : {"policy_fuzz-timeout-5dd27f4d", "policy_fuzz-timeout-minimal"}) {
    const std::string path = std::string(ROCEQOS_SOURCE_DIR) + "/tests/fixtures/fuzz/" + name;
    auto parsing = std::async(std::launch::async, [&path] { return LoadPolicyFile(path); });
    if (parsing.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      std::fprintf(stderr, "%s: the policy loader is still running after 60 s\n", name);
      std::_Exit(1);  // the looping thread cannot be stopped; the future's destructor would wait
    }
    auto parsed = parsing.get();
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.error().message, path + ":1:1: malformed YAML: unexpected ','");
  }
}

// Brackets, braces and commas where YAML allows them (quoted, in block scalars, in comments) are
// not what the guard above rejects.
TEST(PolicyYaml, BracketsInsideScalarsAndCommentsAreFine) {
  const char* text = R"(# a comment with ,]} in it
devices:
  - name: "quoted ,]} [x"   # and here ,]}
    match: {netdev: 'eth[0-9]'}
    policy: {pfc: [3]}
  - name: >-
      folded ,]}
    match: {netdev: eth9}
)";
  auto set = ParsePolicy(text, "ok.yaml");
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->rules.size(), 2u);
  EXPECT_EQ(set->rules[0].name, "quoted ,]} [x");
  EXPECT_EQ(set->rules[1].name, "folded ,]}");
  EXPECT_EQ(set->Resolve(MakeDevice("eth7")).second, "quoted ,]} [x");
}

TEST(PolicyFile, MissingFileIsAnErrorNamingIt) {
  auto parsed = LoadPolicyFile("/nonexistent/policy.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("/nonexistent/policy.yaml"), std::string::npos);
}

// A directory of its own per test, removed with everything in it.
class PolicyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "roceqos_policy_XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr) << std::strerror(errno);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // LoadPolicyFile under a deadline: a loader that blocks (a FIFO without a writer) cannot be
  // stopped, so past it the process ends with a message rather than stalling the suite.
  static Result<PolicySet> LoadWithin(const std::string& path) {
    auto loading = std::async(std::launch::async, [path] { return LoadPolicyFile(path); });
    if (loading.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      std::fprintf(stderr, "LoadPolicyFile(%s) is still running after 10 s\n", path.c_str());
      std::_Exit(1);
    }
    return loading.get();
  }

  std::string dir_;
};

TEST_F(PolicyFileTest, AFifoIsRefusedWithoutWaitingForAWriter) {
  const std::string fifo = dir_ + "/policy.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  auto parsed = LoadWithin(fifo);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, fifo + ": not a regular file (a FIFO)");
}

TEST_F(PolicyFileTest, ADeviceIsRefusedBeforeAnythingIsRead) {
  auto parsed = LoadWithin("/dev/zero");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "/dev/zero: not a regular file (a character device)");
}

TEST_F(PolicyFileTest, AFileBeyondTheBoundIsRefused) {
  // A valid policy, padded with comments past the bound: the size alone refuses it.
  const std::string path = dir_ + "/policy.yaml";
  std::string text = "defaults: {pfc: [3]}\n";
  while (text.size() <= kMaxPolicyFileBytes) text += "# padding padding padding padding\n";
  std::ofstream(path) << text;
  auto parsed = LoadWithin(path);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message,
            fmt::format("{}: {} bytes, larger than the limit of 1048576 bytes", path, text.size()));
  text.resize(kMaxPolicyFileBytes);  // exactly at the bound: read
  std::ofstream(path, std::ios::trunc) << text;
  EXPECT_TRUE(LoadWithin(path).ok());
}

// Kubernetes mounts a ConfigMap key as policy.yaml -> ..data/policy.yaml, ..data ->
// ..<timestamp>/: the loader follows the chain and checks what it ends in.
TEST_F(PolicyFileTest, ASymlinkChainToARegularFileIsFollowed) {
  std::filesystem::create_directory(dir_ + "/..2026_01_01");
  std::ofstream(dir_ + "/..2026_01_01/policy.yaml") << "defaults: {pfc: [3, 4]}\n";
  std::filesystem::create_directory_symlink("..2026_01_01", dir_ + "/..data");
  std::filesystem::create_symlink("..data/policy.yaml", dir_ + "/policy.yaml");
  auto parsed = LoadWithin(dir_ + "/policy.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->defaults.pfc, 0x18);
  EXPECT_EQ(parsed->source, dir_ + "/policy.yaml");

  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_symlink("fifo", dir_ + "/to-fifo.yaml");
  auto fifo = LoadWithin(dir_ + "/to-fifo.yaml");
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().message, dir_ + "/to-fifo.yaml: not a regular file (a FIFO)");
}

}  // namespace
}  // namespace roceqos

namespace roceqos {
namespace {

// tcp_ecn is host-wide: a device rule may leave it unchecked, not set its own value.
TEST(PolicyHostWide, RuleMayUncheckTcpEcn) {
  auto set = ParsePolicy(
      "defaults: {tcp_ecn: 2}\ndevices:\n  - match: {netdev: x}\n    policy: {tcp_ecn: null}\n",
      "ok.yaml");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->defaults.tcp_ecn, 2);
  EXPECT_FALSE(set->rules[0].policy.tcp_ecn.has_value());
}

}  // namespace
}  // namespace roceqos
