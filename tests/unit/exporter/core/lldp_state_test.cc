#include "exporter/core/lldp_state.h"

#include <gtest/gtest.h>

#include "tests/unit/support/lldp_neighbors.h"

namespace roceqos {
namespace {

using lldp_test::Named;

LldpState WithPorts() {
  LldpState state;
  state.view.emplace();
  lldp::LocalPort with_neighbor;
  with_neighbor.neighbors.push_back(Named("leaf01", "Eth1/1"));
  with_neighbor.neighbors.push_back(Named("second", "x"));
  state.view->ports["eth0"] = with_neighbor;
  state.view->ports["eth1"] = lldp::LocalPort{};
  return state;
}

TEST(LldpStateTest, TheFirstNeighbourIsTheOne) {
  const LldpState state = WithPorts();
  const lldp::Neighbor* found = FindLldpNeighbor(state, "eth0");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->system_name, "leaf01");
  EXPECT_EQ(FindLldpNeighbor(state, "eth1"), nullptr);
  EXPECT_EQ(FindLldpNeighbor(state, "eth9"), nullptr);
  EXPECT_EQ(LldpNeighborAbsence(state, "eth0", true), std::nullopt);
}

TEST(LldpStateTest, APresentNeighbourWinsOverADownLink) {
  // lldpd keeps the neighbour until its TTL ends: it is still the cabling.
  EXPECT_EQ(LldpNeighborAbsence(WithPorts(), "eth0", false), std::nullopt);
}

TEST(LldpStateTest, AbsenceReasons) {
  const LldpState state = WithPorts();
  EXPECT_EQ(LldpNeighborAbsence(state, "eth1", true), LldpAbsence::kNoFrame);
  EXPECT_EQ(LldpNeighborAbsence(state, "eth1", false), LldpAbsence::kLinkDown);
  EXPECT_EQ(LldpNeighborAbsence(state, "eth9", true), LldpAbsence::kNotManaged);
  EXPECT_EQ(LldpNeighborAbsence(state, "eth9", false), LldpAbsence::kLinkDown);
}

TEST(LldpStateTest, CountsEveryNeighbourOfAPort) {
  const LldpState state = WithPorts();
  EXPECT_EQ(LldpNeighborCount(state, "eth0"), 2u);
  EXPECT_EQ(LldpNeighborCount(state, "eth1"), 0u);
  EXPECT_EQ(LldpNeighborCount(state, "eth9"), 0u);
  EXPECT_EQ(LldpNeighborCount(LldpState{}, "eth0"), 0u);
}

TEST(LldpStateTest, AnUnreadablePortIsThatPortsLldpdErrorAlone) {
  LldpState state = WithPorts();
  state.view->ports["eth2"].error = "lldpd socket /run/lldpd.socket: port eth2: not found";
  EXPECT_EQ(LldpNeighborAbsence(state, "eth2", true), LldpAbsence::kLldpdError);
  EXPECT_EQ(LldpNeighborAbsence(state, "eth2", false), LldpAbsence::kLinkDown);
  EXPECT_EQ(LldpNeighborAbsence(state, "eth1", true), LldpAbsence::kNoFrame);
  EXPECT_EQ(LldpNeighborAbsence(state, "eth0", true), std::nullopt);
}

TEST(LldpStateTest, AFailedQueryGivesItsReasonToEveryNetdev) {
  LldpState state;
  state.failure = LldpAbsence::kPermissionDenied;
  EXPECT_EQ(LldpNeighborAbsence(state, "eth0", true), LldpAbsence::kPermissionDenied);
  EXPECT_EQ(LldpNeighborAbsence(state, "eth0", false), LldpAbsence::kPermissionDenied);
  EXPECT_EQ(LldpAbsenceName(LldpAbsence::kNoFrame), "no_frame");
  EXPECT_EQ(LldpAbsenceName(LldpAbsence::kLldpdNotInstalled), "lldpd_not_installed");
}

}  // namespace
}  // namespace roceqos
