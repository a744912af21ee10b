#include "exporter/app/check_gids.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/support/rdma_port.h"

namespace roceqos {
namespace {

using testing::PortOf;

Device WithOwnPort(const std::string& name, const std::string& port_netdev) {
  Device d;
  d.name = name;
  d.rdma_ports = {PortOf("mlx5_0", port_netdev)};
  return d;
}

TEST(CheckGidItems, OneItemPerMissingAddressOrOneInSyncItem) {
  const std::vector<Device> devices{WithOwnPort("eth0", "eth0"), WithOwnPort("eth1", "eth1"),
                                    WithOwnPort("eth2", "bond0")};
  GidRound round;
  round.state.netdevs["eth0"].checked = {1, 2};
  NetdevGidCheck& eth1 = round.state.netdevs["eth1"];
  eth1.checked = {2, 0};
  eth1.missing = {
      {"eth1.7", "198.51.100.1", AddressFamily::kIpv4, GidMissReason::kWrongNetdev, "eth1"},
      {"eth1", "192.0.2.1", AddressFamily::kIpv4, GidMissReason::kV1Only, ""}};
  const auto items = GidCheckItems(devices, round, "");
  ASSERT_EQ(items.at("eth0").size(), 1u);
  EXPECT_EQ(items.at("eth0")[0].status, FieldStatus::kInSync);
  EXPECT_EQ(items.at("eth0")[0].actual, "3 addresses, each with its RoCE v2 GID");
  ASSERT_EQ(items.at("eth1").size(), 2u);
  EXPECT_EQ(items.at("eth1")[0].item, "gids 198.51.100.1");
  EXPECT_EQ(items.at("eth1")[0].status, FieldStatus::kDrift);
  EXPECT_EQ(items.at("eth1")[0].expected, "a RoCE v2 GID on eth1.7");
  EXPECT_EQ(items.at("eth1")[0].actual, "a RoCE v2 GID on eth1 (wrong_netdev)");
  EXPECT_EQ(items.at("eth1")[1].actual, "a RoCE v1 GID only (v1_only)");
  EXPECT_EQ(items.count("eth2"), 0u) << "a LAG member's port is the bond's";
}

TEST(CheckGidItems, AnUncheckedNetdevIsFailedWithTheReasonOrUnverifiedWithoutATable) {
  const std::vector<Device> devices{WithOwnPort("eth0", "eth0")};
  GidRound round;
  auto items = GidCheckItems(devices, round, "RTM_GETADDR dump: Operation not permitted");
  EXPECT_EQ(items.at("eth0")[0].status, FieldStatus::kFailed);
  EXPECT_EQ(items.at("eth0")[0].actual, "RTM_GETADDR dump: Operation not permitted");

  round.errors.push_back(MakeError(0, "mlx5_0 port 1: gids/3: garbled"));
  items = GidCheckItems(devices, round, "");
  EXPECT_EQ(items.at("eth0")[0].status, FieldStatus::kFailed);
  EXPECT_EQ(items.at("eth0")[0].actual, "mlx5_0 port 1: gids/3: garbled");

  round.errors.clear();
  items = GidCheckItems(devices, round, "");
  EXPECT_EQ(items.at("eth0")[0].status, FieldStatus::kAbsent);
}

}  // namespace
}  // namespace roceqos
