#include "exporter/sampling/gid_check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/unit/support/pci_sysfs_tree.h"
#include "tests/unit/support/rdma_port.h"
#include "tests/unit/support/recorded_addresses.h"

namespace roceqos {
namespace {

using testing::PortOf;

namespace fs = std::filesystem;

// The recorded addresses (tests/unit/support/recorded_addresses.h) against a synthetic GID
// table: rq0 (ifindex 3) is the RDMA port's netdev, rq1 (ifindex 2) stands in for its VLAN.
constexpr const char* kGid192 = "0000:0000:0000:0000:0000:ffff:c000:0201";    // 192.0.2.1, rq0
constexpr const char* kGid198 = "0000:0000:0000:0000:0000:ffff:c633:6401";    // 198.51.100.1, rq1
constexpr const char* kGid2001 = "2001:0db8:0000:0000:0000:0000:0000:0001";   // 2001:db8::1, rq0
constexpr const char* kGidFe801 = "fe80:0000:0000:0000:0000:0000:0000:0001";  // fe80::1, rq1

class GidCheck : public ::testing::Test, public testing::PciSysfsTree {
 protected:
  GidCheck()
      : function_(Function("0000:3b:00.0")),
        port_(RdmaPortGids(function_, "rxe0", 1, 16)),
        addresses_(testing::RecordedAddresses()) {
    VirtualNetdev("rq1", "2\n");
    device_.name = "rq0";
    device_.ifindex = testing::kRecordedRq0;
    device_.vlan_uppers = {"rq1"};
    device_.rdma_ports = {PortOf("rxe0", "rq0")};
  }
  // Every settled address with a RoCE v2 GID on its own netdev (and the v1 twins the kernel adds).
  void CompleteTable() {
    GidEntry(port_, 0, kGid192, "IB/RoCE v1", "rq0");
    GidEntry(port_, 1, kGid192, "RoCE v2", "rq0");
    GidEntry(port_, 2, kGid2001, "RoCE v2", "rq0");
    GidEntry(port_, 3, kGid198, "RoCE v2", "rq1");
    GidEntry(port_, 4, kGidFe801, "RoCE v2", "rq1");
  }
  GidRound Check() { return CheckDeviceGids({&device_}, addresses_, KernelGidReaders(root())); }

  const fs::path function_;
  const fs::path port_;
  const std::vector<IfAddress> addresses_;
  Device device_;
};

TEST_F(GidCheck, EverySettledAddressOfTheNetdevAndItsVlanWithItsV2GidPasses) {
  CompleteTable();
  const GidRound round = Check();
  ASSERT_TRUE(round.errors.empty()) << round.errors[0].message;
  ASSERT_EQ(round.state.netdevs.count("rq0"), 1u);
  const NetdevGidCheck& check = round.state.netdevs.at("rq0");
  // Not the tentative 2001:db8:1::1 nor the kernel's link-locals (DAD not done: no GID yet).
  EXPECT_EQ(check.checked[size_t(AddressFamily::kIpv4)], 2u);
  EXPECT_EQ(check.checked[size_t(AddressFamily::kIpv6)], 2u);
  EXPECT_TRUE(check.missing.empty());
  ASSERT_EQ(round.state.ports.size(), 1u);
  EXPECT_EQ(round.state.ports[0], (PortGidCounts{"rq0", "rxe0", 1, 1, 4}));
}

TEST_F(GidCheck, NamesEachMissingAddressWithItsReason) {
  GidEntry(port_, 0, kGid192, "IB/RoCE v1", "rq0");  // v1 only
  GidEntry(port_, 1, kGid198, "RoCE v2", "rq0");     // on rq0, the address is on rq1
  GidEntry(port_, 2, kGidFe801, "RoCE v2", "rq1");   // 2001:db8::1 has none
  const GidRound round = Check();
  ASSERT_TRUE(round.errors.empty());
  const std::vector<GidMiss> expected{
      {"rq1", "198.51.100.1", AddressFamily::kIpv4, GidMissReason::kWrongNetdev, "rq0"},
      {"rq0", "192.0.2.1", AddressFamily::kIpv4, GidMissReason::kV1Only, ""},
      {"rq0", "2001:db8::1", AddressFamily::kIpv6, GidMissReason::kNoGid, ""},
  };
  const NetdevGidCheck& check = round.state.netdevs.at("rq0");
  EXPECT_EQ(check.missing, expected);
  EXPECT_EQ(check.Missing(AddressFamily::kIpv4, GidMissReason::kWrongNetdev), 1u);
  EXPECT_EQ(check.Missing(AddressFamily::kIpv6, GidMissReason::kV1Only), 0u);
}

TEST_F(GidCheck, AVanishedVlanIsNotChecked) {
  CompleteTable();
  device_.vlan_uppers = {"rq1", "gone.7"};  // no sysfs entry: left out, nothing to check
  fs::remove(root() / "class/net/rq1");
  const GidRound round = Check();
  EXPECT_EQ(round.state.netdevs.at("rq0").checked[size_t(AddressFamily::kIpv4)], 1u);
  EXPECT_EQ(round.state.netdevs.at("rq0").checked[size_t(AddressFamily::kIpv6)], 1u);
}

// mlx5_bond_0's port names the active member as its netdev; the GIDs are the bond's.
TEST_F(GidCheck, ALagPortIsCheckedOnTheBondNotOnTheMemberItNames) {
  CompleteTable();
  device_.rdma_ports[0].netdev = "ens1f0np0";
  device_.kind = "bond";
  GidRound round = Check();
  EXPECT_TRUE(round.state.netdevs.at("rq0").missing.empty());
  ASSERT_EQ(round.state.ports.size(), 1u);

  device_.kind = "";
  device_.slave_kind = "bond";
  device_.rdma_ports[0].netdev = "rq0";  // the member PORT_GET names
  round = Check();
  EXPECT_TRUE(round.state.netdevs.empty());
  EXPECT_TRUE(round.state.ports.empty());
  EXPECT_TRUE(round.errors.empty());

  device_.slave_kind = "";
  device_.rdma_ports[0].netdev = "other0";  // another netdev's port listed here
  EXPECT_TRUE(Check().state.netdevs.empty());
}

TEST_F(GidCheck, AnAbsentTableIsUnknownWithoutAnErrorAndAGarbledOneIsAnError) {
  device_.rdma_ports[0].port = 2;  // no such port in sysfs
  GidRound round = Check();
  EXPECT_TRUE(round.state.netdevs.empty());
  EXPECT_TRUE(round.errors.empty());

  device_.rdma_ports[0].port = 1;
  GidEntry(port_, 0, kGid192, "RoCE v3", "rq0");
  round = Check();
  EXPECT_TRUE(round.state.netdevs.empty());
  EXPECT_TRUE(round.state.ports.empty());
  ASSERT_EQ(round.errors.size(), 1u);
  EXPECT_NE(round.errors[0].message.find("rxe0 port 1"), std::string::npos);
}

}  // namespace
}  // namespace roceqos
