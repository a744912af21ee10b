#include "exporter/app/write_facts_kernel.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "tests/unit/support/pci_sysfs_tree.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// The kernel's layout (tests/unit/support/pci_sysfs_tree.h), changed between resolutions the way
// a driver reload, a rename or a swap changes the real one.
class ResolverSysfs : public ::testing::Test, public testing::PciSysfsTree {
 protected:
  void Netdev(const fs::path& function, const std::string& name, int ifindex) {
    PciSysfsTree::Netdev(function, name, std::to_string(ifindex) + "\n");
  }
  void VirtualNetdev(const std::string& name, int ifindex) {
    PciSysfsTree::VirtualNetdev(name, std::to_string(ifindex) + "\n");
  }
  const fs::path root_ = root();
  std::unique_ptr<KernelDeviceResolver> resolver_ =
      std::make_unique<KernelDeviceResolver>(root_.string());
};

TEST_F(ResolverSysfs, APciIdentityResolvesToItsNetdevIfindexAndRdmaDevice) {
  const fs::path fn = Function("0000:3b:00.0");
  Netdev(fn, "eth2", 5);
  fs::create_directories(fn / "infiniband/mlx5_0");
  std::optional<ResolvedDevice> resolved = resolver_->Resolve("pci:0000:3b:00.0");
  ASSERT_TRUE(resolved.has_value());
  EXPECT_EQ(resolved->netdev, "eth2");
  EXPECT_EQ(resolved->ifindex, 5);
  EXPECT_EQ(resolved->rdma_devices, std::vector<std::string>{"mlx5_0"});
}

TEST_F(ResolverSysfs, ASwapOfTwoNamesIsSeenAtTheNextResolution) {
  const fs::path a = Function("0000:3b:00.0");
  const fs::path b = Function("0000:3b:00.1");
  Netdev(a, "eth2", 5);
  Netdev(b, "eth3", 6);
  ASSERT_EQ(resolver_->Resolve("pci:0000:3b:00.0")->netdev, "eth2");
  // udev renames: eth2 <-> eth3 (ifindex follows the netdev, the name follows the rename).
  Unregister(a, "eth2");
  Unregister(b, "eth3");
  Netdev(a, "eth3", 5);
  Netdev(b, "eth2", 6);
  std::optional<ResolvedDevice> now = resolver_->Resolve("pci:0000:3b:00.0");
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->netdev, "eth3");
  EXPECT_EQ(now->ifindex, 5);
  EXPECT_EQ(resolver_->Resolve("pci:0000:3b:00.1")->netdev, "eth2");
}

TEST_F(ResolverSysfs, AReloadedDriverShowsANewIfindexAndAVanishedRdmaDevice) {
  const fs::path fn = Function("0000:3b:00.0");
  Netdev(fn, "eth2", 5);
  fs::create_directories(fn / "infiniband/mlx5_0");
  Unregister(fn, "eth2");
  fs::remove_all(fn / "infiniband");
  EXPECT_EQ(resolver_->Resolve("pci:0000:3b:00.0"), std::nullopt) << "mid-reload: no netdev";
  Netdev(fn, "eth2", 9);
  std::optional<ResolvedDevice> reloaded = resolver_->Resolve("pci:0000:3b:00.0");
  ASSERT_TRUE(reloaded.has_value());
  EXPECT_EQ(reloaded->ifindex, 9);
  EXPECT_TRUE(reloaded->rdma_devices.empty()) << "rmmod mlx5_ib: the netdev stays, RDMA goes";
}

TEST_F(ResolverSysfs, AFunctionWithSeveralNetdevsNamesNoSingleDevice) {
  const fs::path fn = Function("0000:3b:00.0");
  Netdev(fn, "eth2", 5);
  Netdev(fn, "eth2rep", 11);
  EXPECT_EQ(resolver_->Resolve("pci:0000:3b:00.0"), std::nullopt);
}

TEST_F(ResolverSysfs, ANetdevIdentityResolvesOnlyWhileItHasNoPciFunction) {
  VirtualNetdev("veth0", 12);
  std::optional<ResolvedDevice> veth = resolver_->Resolve("netdev:veth0");
  ASSERT_TRUE(veth.has_value());
  EXPECT_EQ(veth->netdev, "veth0");
  EXPECT_EQ(veth->ifindex, 12);
  EXPECT_EQ(resolver_->Resolve("netdev:veth1"), std::nullopt);
  // A PCI netdev now carries the name: another device than the one "netdev:eth2" named.
  Netdev(Function("0000:3b:00.0"), "eth2", 5);
  EXPECT_EQ(resolver_->Resolve("netdev:eth2"), std::nullopt);
}

TEST_F(ResolverSysfs, MalformedIdentitiesResolveToNothing) {
  VirtualNetdev("veth0", 12);
  for (const char* identity :
       {"", "pci:", "netdev:", "veth0", "pci:../../..", "netdev:../veth0", "host", "pci:0000:3b"})
    EXPECT_EQ(resolver_->Resolve(identity), std::nullopt) << identity;
}

}  // namespace
}  // namespace roceqos
