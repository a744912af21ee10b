#include "exporter/qos/qos_fields.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "exporter/qos/remediate_plan.h"
#include "tests/unit/support/qos_observation.h"

namespace roceqos {
namespace {

// A valid policy value for each field, by name: the test's own spelling of the policy keys.
const std::map<std::string, std::string, std::less<>> kExampleValues = {
    {"trust", "dscp"},
    {"pfc", "[3, 4]"},
    {"dscp_prio", "{26: 3}"},
    {"prio_tc", "[0, 0, 0, 3, 0, 0, 0, 0]"},
    {"ets",
     "{tsa: [ets, ets, ets, ets, strict, strict, strict, strict], "
     "bandwidth: [10, 10, 70, 10, 0, 0, 0, 0]}"},
    {"buffer", "{prio_buffer: [0, 0, 0, 1, 0, 0, 0, 0]}"},
    {"roce_tos", "106"},
    {"dcqcn_np", "[3]"},
    {"dcqcn_rp", "[3]"},
    {"tcp_ecn", "2"},
    {"mtu", "9000"},
    {"link_speed_min_mbps", "100000"},
    {"sriov_numvfs", "8"},
    {"cnp_dscp", "40"},
    {"cnp_802p_prio", "5"},
    {"dcqcn_params", "{roce_rp: {rpg_ai_rate: 5}}"},
};

// "dcqcn.np: [3]" as YAML: "dcqcn: {np: [3]}".
std::string KeyValue(std::string_view policy_key, std::string_view value) {
  const size_t dot = policy_key.find('.');
  if (dot == std::string_view::npos) return fmt::format("{}: {}", policy_key, value);
  return fmt::format("{}: {{{}: {}}}", policy_key.substr(0, dot), policy_key.substr(dot + 1),
                     value);
}

Result<PolicySet> ParseDefaults(const QosFieldSpec& spec, std::string_view value) {
  return ParsePolicy(fmt::format("defaults:\n  {}\n", KeyValue(spec.policy_key, value)), "t.yaml");
}

Result<PolicySet> ParseRule(const QosFieldSpec& spec, std::string_view value) {
  return ParsePolicy(fmt::format("devices:\n  - match: {{netdev: x}}\n    policy: {{{}}}\n",
                                 KeyValue(spec.policy_key, value)),
                     "t.yaml");
}

std::set<std::string_view> Names(bool (*pick)(const QosFieldSpec&)) {
  std::set<std::string_view> names;
  for (const QosFieldSpec& spec : QosFieldTable())
    if (pick(spec)) names.insert(spec.name);
  return names;
}

TEST(QosFieldTable, HasOneRowPerFieldInEnumOrder) {
  ASSERT_EQ(QosFieldTable().size(), std::size(kAllQosFields));
  for (size_t i = 0; i < std::size(kAllQosFields); ++i) {
    EXPECT_EQ(QosFieldTable()[i].field, kAllQosFields[i]) << i;
    EXPECT_EQ(FieldSpec(kAllQosFields[i]).field, kAllQosFields[i]) << i;
  }
}

TEST(QosFieldTable, NamesAreUniqueAndFindTheirField) {
  std::set<std::string_view> names;
  for (const QosFieldSpec& spec : QosFieldTable()) {
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    EXPECT_EQ(QosFieldByName(spec.name), spec.field) << spec.name;
    EXPECT_EQ(QosFieldName(spec.field), spec.name);
  }
  EXPECT_EQ(QosFieldByName("pfc_en"), std::nullopt);
}

// The `field` label is the policy key, with "." for a key nested in a mapping spelled "_".
TEST(QosFieldTable, EachNameIsAPolicyKeyTheParserAccepts) {
  for (const QosFieldSpec& spec : QosFieldTable()) {
    std::string key(spec.policy_key);
    std::replace(key.begin(), key.end(), '.', '_');
    EXPECT_EQ(key, spec.name);
    auto it = kExampleValues.find(spec.name);
    ASSERT_NE(it, kExampleValues.end()) << "no example value for " << spec.name;
    auto set = ParseDefaults(spec, it->second);
    ASSERT_TRUE(set.ok()) << spec.name << ": " << set.error().message;
    EXPECT_TRUE(spec.checked(set->defaults)) << spec.name;
    auto unchecked = ParseDefaults(spec, "null");
    ASSERT_TRUE(unchecked.ok()) << spec.name << ": " << unchecked.error().message;
    EXPECT_FALSE(spec.checked(unchecked->defaults)) << spec.name;
  }
  EXPECT_EQ(kExampleValues.size(), QosFieldTable().size()) << "an example names no field";
}

// The parser accepts exactly the table's top-level keys, and lists them when it rejects one.
TEST(QosFieldTable, TheParserAcceptsNoOtherKey) {
  auto set = ParsePolicy("defaults:\n  pfc_en: [3]\n", "t.yaml");
  ASSERT_FALSE(set.ok());
  std::string keys;
  for (std::string_view key : PolicyKeys())
    keys += fmt::format("{}{}", keys.empty() ? "" : ", ", key);
  EXPECT_NE(set.error().message.find("(expected one of: " + keys + ")"), std::string::npos)
      << set.error().message;
  EXPECT_EQ(std::count(PolicyKeys().begin(), PolicyKeys().end(), "dcqcn"), 1);
}

// `policy show-default` writes every key, unchecked ones as null, so a site sees each field.
TEST(QosFieldTable, TheRenderedPolicyNamesEveryKey) {
  const std::string yaml = "\n" + RenderQosPolicyYaml(QosPolicy{}, 0);
  for (std::string_view key : PolicyKeys())
    EXPECT_NE(yaml.find(fmt::format("\n{}:", key)), std::string::npos) << key << " in:\n" << yaml;
}

TEST(QosFieldTable, RemediationWritesAllButTheLinkFacts) {
  EXPECT_EQ(Names([](const QosFieldSpec& s) { return !s.Remediable(); }),
            (std::set<std::string_view>{"mtu", "link_speed_min_mbps", "sriov_numvfs"}));
  for (const QosFieldSpec& spec : QosFieldTable()) {
    EXPECT_EQ(Remediable(spec.field), spec.Remediable()) << spec.name;
    EXPECT_NE(spec.checked, nullptr) << spec.name;
    EXPECT_NE(spec.compare, nullptr) << spec.name;
    EXPECT_FALSE(spec.source.empty()) << spec.name;
  }
}

TEST(QosFieldTable, OnlyTcpEcnIsHostWide) {
  EXPECT_EQ(Names([](const QosFieldSpec& s) { return s.host_wide; }),
            (std::set<std::string_view>{"tcp_ecn"}));
}

// A device rule may not set a host-wide field (two rules would fight over it), any other field it
// may.
TEST(QosFieldTable, OnlyHostWideFieldsAreRejectedInADeviceRule) {
  for (const QosFieldSpec& spec : QosFieldTable()) {
    auto set = ParseRule(spec, kExampleValues.find(spec.name)->second);
    EXPECT_EQ(set.ok(), !spec.host_wide) << spec.name;
    if (!set.ok()) {
      EXPECT_NE(set.error().message.find(fmt::format("{} is host-wide", spec.name)),
                std::string::npos)
          << set.error().message;
    }
    EXPECT_TRUE(ParseRule(spec, "null").ok()) << spec.name << ": a rule may uncheck any field";
  }
}

TEST(QosFieldTable, EveryPlanStepWritesAField) {
  for (size_t step = 0; step < kNumWriteSteps; ++step)
    EXPECT_TRUE(std::any_of(
        QosFieldTable().begin(), QosFieldTable().end(),
        [&](const QosFieldSpec& s) { return static_cast<size_t>(s.write_step) == step; }))
        << "no field is written by step " << step;
}

// A NIC where every remediable field drifted: the plan writes each of them, in the table's step
// order, and logs the table's side effect before the writes that have one.
TEST(QosFieldTable, ThePlanWritesInStepOrderWithTheTablesSideEffects) {
  QosPolicy policy = DefaultPolicy().defaults;
  policy.prio_tc = std::array<uint8_t, kNumPriorities>{0, 0, 0, 3, 0, 0, 0, 0};
  policy.buffer = BufferPolicy{{0, 0, 0, 3, 0, 0, 0, 0}, std::nullopt};
  policy.dcqcn_rp_params = {{"rpg_ai_rate", 5}};
  ObservedQos observed = qos_test::DefaultPolicyObservation();
  QosState& dcb = observed.dcb.value;
  dcb.pfc->enabled_mask = 0;
  dcb.apps.clear();  // trust pcp
  observed.dcqcn.np_enabled[3] = Observed<bool>::Ok(false);
  observed.dcqcn.rp_enabled[3] = Observed<bool>::Ok(false);
  observed.dcqcn.cnp_dscp = Observed<uint8_t>::Ok(0);
  observed.dcqcn.cnp_802p_prio = Observed<uint8_t>::Ok(0);
  observed.dcqcn_params = Observed<DcqcnParams>::Ok(DcqcnParams{{{"rpg_ai_rate", 1}}, {}, {}});
  observed.roce_tos[0].tos.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(0);
  observed.tcp_ecn = Observed<int>::Ok(0);
  const DeviceDrift drift = EvaluateDrift(policy, observed);
  const std::vector<RemediationAction> plan = PlanRemediation(policy, observed, drift);
  std::set<WriteStep> steps;
  for (size_t i = 0; i < plan.size(); ++i) {
    const QosFieldSpec& spec = FieldSpec(plan[i].field);
    steps.insert(spec.write_step);
    if (i > 0) {
      EXPECT_GE(spec.write_step, FieldSpec(plan[i - 1].field).write_step) << i;
    }
    if (!spec.side_effect.empty() && plan[i].kind != RemediationAction::Kind::kDcbDeleteApps) {
      EXPECT_NE(plan[i].side_effect.find(spec.side_effect), std::string::npos) << spec.name;
    }
  }
  EXPECT_EQ(steps.size(), kNumWriteSteps) << "every step planned a write";
}

std::string ReadDoc(const std::string& name) {
  std::ifstream in(std::string(ROCEQOS_SOURCE_DIR) + "/docs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text between "<!-- begin -->" and "<!-- end -->" markers (exclusive, from the line after).
std::string Between(const std::string& text, std::string_view begin, std::string_view end) {
  const size_t b = text.find(begin);
  const size_t e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return "";
  const size_t start = text.find('\n', b) + 1;
  return text.substr(start, e - start);
}

TEST(QosFieldTable, DocsTableMatchesTheCode) {
  const std::string doc = ReadDoc("policy.md");
  EXPECT_EQ(Between(doc, "<!-- qos-fields:begin", "<!-- qos-fields:end"), QosFieldsDocTable())
      << "docs/policy.md \"Fields\" differs from exporter/qos/qos_fields.cc; put this between the "
         "qos-fields markers:\n"
      << QosFieldsDocTable();
}

// Backticked words of a markdown cell: "`cnp_dscp`, `cnp_802p_prio`" -> both names.
std::vector<std::string> CodeWords(std::string_view cell) {
  std::vector<std::string> words;
  for (size_t b = cell.find('`'); b != std::string_view::npos; b = cell.find('`', b + 1)) {
    const size_t e = cell.find('`', b + 1);
    if (e == std::string_view::npos) break;
    words.emplace_back(cell.substr(b + 1, e - b - 1));
    b = e;
  }
  return words;
}

// docs/policy.md "What is written, and how" explains each field's write once: every field has a
// row, and the row that says "never" names exactly the observe-only fields.
TEST(QosFieldTable, DocsWriteTableNamesEveryFieldOnce) {
  std::istringstream doc(
      Between(ReadDoc("policy.md"), "### What is written, and how", "### Guardrails"));
  std::multiset<std::string> written, never;
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("| `")) continue;
    const size_t bar = line.find('|', 1);
    const std::string_view how = std::string_view(line).substr(bar + 1);
    for (const std::string& name : CodeWords(std::string_view(line).substr(1, bar - 1)))
      (how.find("never") != std::string_view::npos && how.find("never") < 3 ? never : written)
          .insert(name);
  }
  std::multiset<std::string> want_written, want_never;
  for (const QosFieldSpec& spec : QosFieldTable())
    (spec.Remediable() ? want_written : want_never).insert(std::string(spec.name));
  EXPECT_EQ(written, want_written);
  EXPECT_EQ(never, want_never);
}

// docs/policy.md "Keys" has one row per key the parser accepts, in the table's order.
TEST(QosFieldTable, DocsKeysTableHasOneRowPerPolicyKey) {
  std::istringstream doc(
      Between(ReadDoc("policy.md"), "### Keys", "### DCQCN parameters (`dcqcn_params`)"));
  std::vector<std::string> keys;
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("| `")) continue;
    const std::vector<std::string> words = CodeWords(line.substr(0, line.find('|', 1)));
    keys.insert(keys.end(), words.begin(), words.end());
  }
  EXPECT_EQ(keys, std::vector<std::string>(PolicyKeys().begin(), PolicyKeys().end()));
}

}  // namespace
}  // namespace roceqos
