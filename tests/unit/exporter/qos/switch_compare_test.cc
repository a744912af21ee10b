#include "exporter/qos/switch_compare.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>

#include "tests/unit/support/lldp_neighbors.h"
#include "tests/unit/support/qos_observation.h"

namespace roceqos {
namespace {

using lldp_test::Leaf;

// A leaf port configured like the host's standard policy: PFC on 3, DSCP 26 -> 3, MFS 9216.
ObservedQos Host(uint32_t mtu = 9000) {
  ObservedQos host = qos_test::DefaultPolicyObservation();
  host.mtu = Observed<uint32_t>::Ok(mtu);
  return host;
}

SwitchVerdict Field(const std::vector<SwitchVerdict>& verdicts, SwitchField field) {
  for (const auto& v : verdicts)
    if (v.field == field) return v;
  ADD_FAILURE() << "no verdict for " << SwitchFieldName(field);
  return {};
}

TEST(SwitchCompareTest, AStandardLeafAgreesWithAStandardHost) {
  const auto verdicts = CompareWithSwitch(Host(), Leaf());
  ASSERT_EQ(verdicts.size(), 3u);
  for (const auto& v : verdicts)
    EXPECT_EQ(v.status, FieldStatus::kInSync) << SwitchFieldName(v.field);
  EXPECT_EQ(Field(verdicts, SwitchField::kMtu).host, "9000 (frame 9022)");
  EXPECT_EQ(Field(verdicts, SwitchField::kDscpPrio).switch_side, "{26:3}");
}

TEST(SwitchCompareTest, PfcOnAPriorityTheNicDoesNotPause) {
  lldp::Neighbor leaf = Leaf();
  leaf.dcbx.pfc_configuration->enabled_mask = 0x18;  // {3, 4}
  const SwitchVerdict pfc = Field(CompareWithSwitch(Host(), leaf), SwitchField::kPfc);
  EXPECT_EQ(pfc.status, FieldStatus::kDrift);
  EXPECT_EQ(pfc.host, "[3]");
  EXPECT_EQ(pfc.switch_side, "[3, 4]");
  EXPECT_FALSE(pfc.why.empty());
}

TEST(SwitchCompareTest, FrameSizeCountsHeaderTagAndFcs) {
  // 9194 + 22 = 9216 fits exactly; one byte more does not; 9216 (the checklist's case) neither.
  EXPECT_EQ(Field(CompareWithSwitch(Host(9194), Leaf()), SwitchField::kMtu).status,
            FieldStatus::kInSync);
  EXPECT_EQ(Field(CompareWithSwitch(Host(9195), Leaf()), SwitchField::kMtu).status,
            FieldStatus::kDrift);
  const SwitchVerdict mtu = Field(CompareWithSwitch(Host(9216), Leaf()), SwitchField::kMtu);
  EXPECT_EQ(mtu.status, FieldStatus::kDrift);
  EXPECT_EQ(mtu.host, "9216 (frame 9238)");
  EXPECT_EQ(mtu.switch_side, "9216");
}

TEST(SwitchCompareTest, DscpOnAnotherPriorityOrMissingOnTheHost) {
  lldp::Neighbor leaf = Leaf();
  leaf.dcbx.application_priority->entries[0].priority = 4;
  const SwitchVerdict other = Field(CompareWithSwitch(Host(), leaf), SwitchField::kDscpPrio);
  EXPECT_EQ(other.status, FieldStatus::kDrift);
  EXPECT_EQ(other.host, "{26:3}");
  EXPECT_EQ(other.switch_side, "{26:4}");

  ObservedQos host = Host();
  std::erase_if(host.dcb.value.apps, [](const DcbApp& a) { return a.protocol == 26; });
  const SwitchVerdict missing = Field(CompareWithSwitch(host, Leaf()), SwitchField::kDscpPrio);
  EXPECT_EQ(missing.status, FieldStatus::kDrift);
  EXPECT_EQ(missing.host, "{}");
}

TEST(SwitchCompareTest, HostEntriesTheSwitchDoesNotListAreNotCompared) {
  // The host maps all 64 DSCPs; the switch lists only 26: only 26 counts.
  EXPECT_EQ(Field(CompareWithSwitch(Host(), Leaf()), SwitchField::kDscpPrio).status,
            FieldStatus::kInSync);
}

TEST(SwitchCompareTest, NothingAdvertisedOrUnreadableIsNotComparable) {
  lldp::Neighbor bare;
  bare.system_name = "leaf02";
  for (const auto& v : CompareWithSwitch(Host(), bare))
    EXPECT_EQ(v.status, FieldStatus::kAbsent) << SwitchFieldName(v.field);

  ObservedQos unread = Host();
  unread.dcb = Observed<QosState>::Failed("EPERM");
  unread.mtu = Observed<uint32_t>::Failed("gone");
  for (const auto& v : CompareWithSwitch(unread, Leaf())) {
    EXPECT_EQ(v.status, FieldStatus::kAbsent) << SwitchFieldName(v.field);
    EXPECT_EQ(v.host, "not readable");
  }
}

TEST(SwitchCompareTest, DescribeNamesTheSwitchAndPort) {
  EXPECT_EQ(DescribeNeighbor(Leaf()), "leaf01 Ethernet12 (chassis 0c:29:aa:bb:cc:01)");
  lldp::Neighbor unnamed = Leaf();
  unnamed.system_name.clear();
  EXPECT_EQ(DescribeNeighbor(unnamed), "0c:29:aa:bb:cc:01 Ethernet12 (chassis 0c:29:aa:bb:cc:01)");
}

}  // namespace
}  // namespace roceqos
