#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "exporter/core/gid_state.h"
#include "exporter/render/metrics.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/metric_families.h"

namespace roceqos {
namespace {

using testing::Count;
using testing::MakeDevice;
using testing::Value;

// Two checked netdevs; "gone0" left the selection since the stage's round.
Snapshot WithGids(const std::vector<std::string>& selected) {
  Snapshot s;
  for (const std::string& n : selected) {
    DeviceSnapshot d;
    d.device = std::make_shared<const Device>(MakeDevice(n, 2));
    s.devices.push_back(d);
  }
  auto state = std::make_shared<GidState>();
  state->interval_seconds = 60;
  state->ports = {{"eth0", "mlx5_0", 1, 2, 3}, {"gone0", "mlx5_1", 1, 2, 2}};
  NetdevGidCheck eth0;
  eth0.checked = {2, 1};
  eth0.missing = {
      {"eth0.100", "198.51.100.1", AddressFamily::kIpv4, GidMissReason::kWrongNetdev, "eth0"},
      {"eth0", "2001:db8::1", AddressFamily::kIpv6, GidMissReason::kNoGid, ""},
      {"eth0", "2001:db8::2", AddressFamily::kIpv6, GidMissReason::kNoGid, ""},
  };
  state->netdevs["eth0"] = eth0;
  state->netdevs["gone0"] = NetdevGidCheck{{1, 0}, {}};
  s.gids = state;
  return s;
}

TEST(MetricsGids, CountsPerNetdevAndFamilyAndMissingOnlyWhereAboveZero) {
  const Snapshot s = WithGids({"eth0"});
  const auto families = RenderSnapshot(&s);
  EXPECT_EQ(Value(families, "roce_rdma_gids", {{"device", "mlx5_0"}, {"port", "1"}}), 3);
  EXPECT_EQ(Count(families, "roce_rdma_gids"), 1u);  // v2 only, and not gone0's port
  EXPECT_EQ(Value(families, "roce_roce_v2_gid_checked_addresses",
                  {{"netdev", "eth0"}, {"family", "ipv6"}}),
            1);
  EXPECT_EQ(Count(families, "roce_roce_v2_gid_checked_addresses"), 2u);
  EXPECT_EQ(Value(families, "roce_roce_v2_gid_missing",
                  {{"netdev", "eth0"}, {"family", "ipv6"}, {"reason", "no_gid"}}),
            2);
  EXPECT_EQ(Value(families, "roce_roce_v2_gid_missing",
                  {{"netdev", "eth0"}, {"family", "ipv4"}, {"reason", "wrong_netdev"}}),
            1);
  EXPECT_EQ(Count(families, "roce_roce_v2_gid_missing"), 2u);
  EXPECT_EQ(Value(families, "roce_exporter_gids_interval_seconds", {}), 60);
}

TEST(MetricsGids, NoStateNoFamilies) {
  Snapshot s = WithGids({"eth0"});
  s.gids.reset();
  const auto families = RenderSnapshot(&s);
  EXPECT_EQ(Count(families, "roce_rdma_gids"), 0u);
  EXPECT_EQ(Count(families, "roce_roce_v2_gid_checked_addresses"), 0u);
  EXPECT_EQ(Count(families, "roce_exporter_gids_interval_seconds"), 0u);
}

}  // namespace
}  // namespace roceqos
