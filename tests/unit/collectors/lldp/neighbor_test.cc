#include "collectors/lldp/neighbor.h"

#include <gtest/gtest.h>

namespace roceqos::lldp {
namespace {

CustomTlv Tlv(std::vector<uint8_t> oui, uint8_t subtype, std::vector<uint8_t> info) {
  return {std::move(oui), subtype, std::move(info)};
}

TEST(NeighborTest, DecodesThe8021QazTlvsAndIgnoresOthers) {
  Neighbor n;
  AddCustomTlvs(n,
                {Tlv({0x00, 0x80, 0xc2}, 11, {0x08, 0x18}),              // PFC cap 8, {3, 4}
                 Tlv({0x00, 0x80, 0xc2}, 12, {0x00, 0x65, 0x00, 0x1a}),  // DSCP 26 -> 3
                 Tlv({0x00, 0x12, 0x0f}, 4, {0x24, 0x00}),               // 802.3: not ours
                 Tlv({0x00, 0x80, 0xc2}, 1, {0x00, 0x01})},              // 802.1 PVID: not ours
                "lldp eth0");
  EXPECT_TRUE(n.tlv_errors.empty());
  ASSERT_TRUE(n.dcbx.pfc_configuration);
  EXPECT_EQ(n.dcbx.pfc_configuration->enabled_mask, 0x18);
  ASSERT_TRUE(n.dcbx.application_priority);
  EXPECT_EQ(n.dcbx.application_priority->DscpPriorities(26), std::vector<uint8_t>{3});
  EXPECT_FALSE(n.dcbx.ets_configuration);
}

TEST(NeighborTest, AMalformedTlvIsRecordedAndSkippedNotTheNeighbour) {
  Neighbor n;
  AddCustomTlvs(n,
                {Tlv({0x00, 0x80, 0xc2}, 11, {0x08}),  // one byte short
                 Tlv({0x00, 0x80, 0xc2}, 12, {0x00, 0x65, 0x00, 0x1a})},
                "lldp eth0");
  ASSERT_EQ(n.tlv_errors.size(), 1u);
  EXPECT_NE(n.tlv_errors[0].find("lldp eth0"), std::string::npos) << n.tlv_errors[0];
  EXPECT_NE(n.tlv_errors[0].find("PFC Configuration"), std::string::npos) << n.tlv_errors[0];
  EXPECT_FALSE(n.dcbx.pfc_configuration);
  EXPECT_TRUE(n.dcbx.application_priority);
}

TEST(NeighborTest, ASecondTlvOfOneSubtypeIsAnErrorAndTheFirstStays) {
  Neighbor n;
  AddCustomTlvs(
      n, {Tlv({0x00, 0x80, 0xc2}, 11, {0x08, 0x08}), Tlv({0x00, 0x80, 0xc2}, 11, {0x08, 0x18})},
      "lldp eth0");
  EXPECT_EQ(n.tlv_errors.size(), 1u);
  ASSERT_TRUE(n.dcbx.pfc_configuration);
  EXPECT_EQ(n.dcbx.pfc_configuration->enabled_mask, 0x08);
}

}  // namespace
}  // namespace roceqos::lldp
