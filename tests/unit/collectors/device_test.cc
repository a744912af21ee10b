#include "collectors/device.h"

#include <gtest/gtest.h>

namespace roceqos {
namespace {

TEST(DeviceRoleName, NamesEveryRoleForTheRoleLabel) {
  EXPECT_EQ(DeviceRoleName(DeviceRole::kPf), "pf");
  EXPECT_EQ(DeviceRoleName(DeviceRole::kVf), "vf");
  EXPECT_EQ(DeviceRoleName(DeviceRole::kBond), "bond");
  EXPECT_EQ(DeviceRoleName(DeviceRole::kBondMember), "bond_member");
  EXPECT_EQ(DeviceRoleName(DeviceRole::kOther), "other");
}

}  // namespace
}  // namespace roceqos
