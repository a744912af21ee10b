#include "collectors/pci_function.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/support/pci_sysfs_tree.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// The kernel's layout (tests/unit/support/pci_sysfs_tree.h).
class PciSysfs : public ::testing::Test, public testing::PciSysfsTree {
 protected:
  PciSysfs() : root_(root()) {}
  const fs::path root_;
};

TEST_F(PciSysfs, ReadsTheNetdevItsIfindexAndTheRdmaDevicesOfAFunction) {
  const fs::path fn = Function("0000:3b:00.0");
  Netdev(fn, "ens1f0np0", "7\n");
  Rdma(fn, "mlx5_0");
  Observed<PciFunction> read = ReadPciFunction(root_.string(), "0000:3b:00.0");
  ASSERT_TRUE(read.ok()) << read.error;
  EXPECT_EQ(read.value.address, "0000:3b:00.0");
  ASSERT_EQ(read.value.netdevs.size(), 1u);
  EXPECT_EQ(read.value.netdevs[0], (PciNetdev{"ens1f0np0", 7}));
  EXPECT_EQ(read.value.rdma_devices, std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(NetdevPciAddress(root_.string(), "ens1f0np0"), "0000:3b:00.0");
  EXPECT_EQ(ReadNetdevIfindex(root_.string(), "ens1f0np0"), Observed<int>::Ok(7));
}

TEST_F(PciSysfs, AFunctionWithoutADriverHasNoNetdevAndAMissingOneIsAbsent) {
  Function("0000:3b:00.1");  // unbound: no net/, no infiniband/
  Observed<PciFunction> unbound = ReadPciFunction(root_.string(), "0000:3b:00.1");
  ASSERT_TRUE(unbound.ok()) << unbound.error;
  EXPECT_TRUE(unbound.value.netdevs.empty());
  EXPECT_TRUE(unbound.value.rdma_devices.empty());
  EXPECT_TRUE(ReadPciFunction(root_.string(), "0000:3b:00.7").absent());
  EXPECT_TRUE(ReadNetdevIfindex(root_.string(), "eth9").absent());
  EXPECT_EQ(NetdevPciAddress(root_.string(), "eth9"), std::nullopt);
}

TEST_F(PciSysfs, AVirtualNetdevHasNoPciAddress) {
  VirtualNetdev("veth0", "12\n");
  EXPECT_EQ(ReadNetdevIfindex(root_.string(), "veth0"), Observed<int>::Ok(12));
  EXPECT_EQ(NetdevPciAddress(root_.string(), "veth0"), std::nullopt);
}

TEST_F(PciSysfs, AnUnreadableIfindexIsAFailureNamingTheFile) {
  const fs::path fn = Function("0000:3b:00.0");
  Netdev(fn, "ens1f0np0", "banana\n");
  Observed<PciFunction> read = ReadPciFunction(root_.string(), "0000:3b:00.0");
  ASSERT_TRUE(read.failed());
  EXPECT_NE(read.error.find("ens1f0np0/ifindex"), std::string::npos) << read.error;
  std::ofstream(fn / "net/ens1f0np0/ifindex") << "0\n";  // no live netdev has ifindex 0
  EXPECT_TRUE(ReadNetdevIfindex(root_.string(), "ens1f0np0").failed());
}

TEST_F(PciSysfs, NamesThatWouldLeaveTheirDirectoryAreRefusedUnread) {
  // A file the traversal would reach if the name were used as given.
  std::ofstream(root_ / "ifindex") << "3\n";
  EXPECT_TRUE(ReadPciFunction(root_.string(), "../../..").failed());
  EXPECT_TRUE(ReadPciFunction(root_.string(), "0000:3b:00.0/..").failed());
  EXPECT_TRUE(ReadNetdevIfindex(root_.string(), "../..").failed());
  EXPECT_TRUE(ReadNetdevIfindex(root_.string(), "..").failed());
}

TEST(PciAddress, AcceptsWhatPciNamePrintsOnly) {
  EXPECT_TRUE(IsPciAddress("0000:3b:00.0"));
  EXPECT_TRUE(IsPciAddress("10000:e1:00.7"));  // a VMD domain
  EXPECT_FALSE(IsPciAddress(""));
  EXPECT_FALSE(IsPciAddress("0000:3B:00.0"));  // sysfs prints lower case
  EXPECT_FALSE(IsPciAddress("0000:3b:00.8"));  // function is 0..7
  EXPECT_FALSE(IsPciAddress("000:3b:00.0"));
  EXPECT_FALSE(IsPciAddress("0000:3b:00.0 "));
  EXPECT_FALSE(IsPciAddress("0000:3b:0.00"));
}

TEST(NetdevName, FollowsDevValidName) {
  EXPECT_TRUE(IsNetdevName("ens1f0np0"));
  EXPECT_TRUE(IsNetdevName("a23456789012345"));    // 15 bytes
  EXPECT_FALSE(IsNetdevName("a234567890123456"));  // 16: no room for the NUL in IFNAMSIZ
  EXPECT_FALSE(IsNetdevName(""));
  EXPECT_FALSE(IsNetdevName("."));
  EXPECT_FALSE(IsNetdevName(".."));
  EXPECT_FALSE(IsNetdevName("a/b"));
  EXPECT_FALSE(IsNetdevName("a:b"));
  EXPECT_FALSE(IsNetdevName("a b"));
}

TEST(Ifindex, ParsesAPositiveDecimal) {
  EXPECT_EQ(ParseIfindex("42\n").value(), 42);
  EXPECT_FALSE(ParseIfindex("0\n").ok());
  EXPECT_FALSE(ParseIfindex("-1\n").ok());
  EXPECT_FALSE(ParseIfindex("").ok());
  EXPECT_FALSE(ParseIfindex("99999999999999999999\n").ok());
}

}  // namespace
}  // namespace roceqos
