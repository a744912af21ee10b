#include "collectors/roce_gids.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/support/pci_sysfs_tree.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLinkLocal = "fe80:0000:0000:0000:0e42:a1ff:fe00:0001";
constexpr const char* kV4Mapped = "0000:0000:0000:0000:0000:ffff:0a00:0064";

// The kernel's layout (tests/unit/support/pci_sysfs_tree.h); 12 entries, so that index 10 sorts
// after 2 only when compared as a number.
class RoceGidsSysfs : public ::testing::Test, public testing::PciSysfsTree {
 protected:
  RoceGidsSysfs() : port_(RdmaPortGids(Function("0000:3b:00.0"), "mlx5_0", 1, 12)) {}
  Observed<std::vector<RoceGid>> Read(std::string_view device = "mlx5_0", uint32_t port = 1) {
    return ReadRoceGids(root().string(), device, port);
  }
  const fs::path port_;
};

TEST_F(RoceGidsSysfs, ReadsThePopulatedEntriesInIndexOrderWithTypeAndNetdev) {
  GidEntry(port_, 0, kLinkLocal, "IB/RoCE v1", "ens1f0np0");
  GidEntry(port_, 1, kLinkLocal, "RoCE v2", "ens1f0np0");
  GidEntry(port_, 10, kV4Mapped, "RoCE v2", "ens1f0np0.100");
  GidEntry(port_, 2, kV4Mapped, "RoCE v2", "ens1f0np0");
  const auto table = Read();
  ASSERT_TRUE(table.ok()) << table.error;
  const std::vector<RoceGid> expected{
      {0, kLinkLocal, GidType::kIbRoceV1, "ens1f0np0"},
      {1, kLinkLocal, GidType::kRoceV2, "ens1f0np0"},
      {2, kV4Mapped, GidType::kRoceV2, "ens1f0np0"},
      {10, kV4Mapped, GidType::kRoceV2, "ens1f0np0.100"},
  };
  EXPECT_EQ(table.value, expected);
}

TEST_F(RoceGidsSysfs, AnAllEmptyTableIsKnownAndEmpty) {
  const auto table = Read();
  ASSERT_TRUE(table.ok()) << table.error;
  EXPECT_TRUE(table.value.empty());
}

TEST_F(RoceGidsSysfs, NoSuchDeviceOrPortIsAbsentAndABadNameFails) {
  EXPECT_TRUE(Read("mlx5_9").absent());
  EXPECT_TRUE(Read("mlx5_0", 2).absent());
  EXPECT_TRUE(Read("../../etc").failed());
  EXPECT_TRUE(Read("").failed());
}

TEST_F(RoceGidsSysfs, AGarbledFileFailsTheTableNamingTheFile) {
  GidEntry(port_, 3, kV4Mapped, "RoCE v3", "ens1f0np0");
  auto table = Read();
  ASSERT_TRUE(table.failed());
  EXPECT_NE(table.error.find("gid_attrs/types/3"), std::string::npos) << table.error;

  GidEntry(port_, 3, "10.0.0.100", "RoCE v2", "ens1f0np0");
  table = Read();
  ASSERT_TRUE(table.failed());
  EXPECT_NE(table.error.find("gids/3"), std::string::npos) << table.error;

  GidEntry(port_, 3, kV4Mapped, "RoCE v2", "not/a/netdev");
  table = Read();
  ASSERT_TRUE(table.failed());
  EXPECT_NE(table.error.find("ndevs/3"), std::string::npos) << table.error;
}

TEST_F(RoceGidsSysfs, APopulatedEntryWithoutItsAttributesFails) {
  // A kernel always has gid_attrs next to a populated gids/<i>; without them nothing says which
  // netdev the GID is on, and the caller must not take that for "none on a VLAN".
  GidEntry(port_, 4, kV4Mapped, "RoCE v2", "ens1f0np0");
  fs::remove(port_ / "gid_attrs/ndevs/4");
  EXPECT_TRUE(Read().failed());
}

TEST(RoceGidParse, GidTextTypeAndDeviceName) {
  EXPECT_EQ(ParseGidText(std::string(kLinkLocal) + "\n").value(), kLinkLocal);
  EXPECT_FALSE(ParseGidText("fe80::1\n"));
  EXPECT_FALSE(ParseGidText("FE80:0000:0000:0000:0e42:a1ff:fe00:0001"));  // %pI6 is lower-case
  EXPECT_FALSE(ParseGidText(std::string(kLinkLocal) + ":0000"));
  EXPECT_FALSE(ParseGidText(""));
  EXPECT_TRUE(IsZeroGid("0000:0000:0000:0000:0000:0000:0000:0000"));
  EXPECT_FALSE(IsZeroGid(kV4Mapped));
  EXPECT_EQ(ParseGidType("RoCE v2\n").value(), GidType::kRoceV2);
  EXPECT_EQ(ParseGidType("IB/RoCE v1").value(), GidType::kIbRoceV1);
  EXPECT_FALSE(ParseGidType("RoCE v2\n\n"));
  EXPECT_TRUE(IsRdmaDeviceName("mlx5_bond_0"));
  EXPECT_FALSE(IsRdmaDeviceName(".."));
  EXPECT_FALSE(IsRdmaDeviceName(std::string(64, 'a')));
}

}  // namespace
}  // namespace roceqos
