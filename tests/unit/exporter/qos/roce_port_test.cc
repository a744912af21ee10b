#include "exporter/qos/roce_port.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>

#include <memory>

#include "exporter/qos/drift.h"

namespace roceqos {
namespace {

// A ConnectX port as the driver leaves it: PFC off, no APP entry (trust pcp), MOFED
// traffic_class file present and empty.
ObservedQos FactoryDefaults() {
  ObservedQos o;
  QosState s;
  s.pfc = PfcState{8, 0, 0, 7};
  o.dcb = Observed<QosState>::Ok(s);
  PortTos port{"mlx5_1", 1, {}};
  port.tos.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(std::nullopt);
  o.roce_tos.push_back(port);
  return o;
}

CounterSet Counters(std::vector<std::string> names, std::vector<uint64_t> values) {
  return {std::make_shared<const std::vector<std::string>>(std::move(names)), std::move(values)};
}

RoceTraffic NoTraffic() {
  const CounterSet ethtool = Counters(
      {"rx_prio0_packets", "rx_vport_rdma_unicast_packets", "tx_vport_rdma_unicast_packets"},
      {5000, 0, 0});
  return RoceTrafficOf(&ethtool, {});
}

RocePortClass Classify(const ObservedQos& observed, const RoceTraffic& traffic,
                       std::string_view rule = "default", RocePorts mode = RocePorts::kAuto,
                       std::string remembered = "") {
  return ClassifyRocePort({rule, mode, &observed, traffic, std::move(remembered)});
}

TEST(RoceTraffic, CountsOnlyTheRoceCountersOfEthtoolAndEveryRdmaPort) {
  const CounterSet ethtool = Counters(
      {"rx_prio3_packets", "tx_vport_rdma_unicast_packets", "rx_vport_rdma_multicast_packets"},
      {99, 7, 0});
  const CounterSet mlx5_ib = Counters({"out_of_buffer", "rx_write_requests"}, {3, 11});
  const CounterSet rxe = Counters({"sent_pkts", "rcvd_pkts"}, {2, 1});
  const CounterSet* rdma[] = {&mlx5_ib, &rxe};
  RoceTraffic t = RoceTrafficOf(&ethtool, rdma);
  EXPECT_TRUE(t.known);
  EXPECT_EQ(t.packets, 7u + 11u + 2u + 1u) << "rx_prio3_packets and out_of_buffer are not RoCE";
  EXPECT_EQ(t.evidence, "tx_vport_rdma_unicast_packets 7");

  EXPECT_FALSE(RoceTrafficOf(nullptr, {}).known) << "nothing read: unknown, not zero";
  const CounterSet veth = Counters({"peer_ifindex"}, {4});
  EXPECT_FALSE(RoceTrafficOf(&veth, {}).known) << "a set without RoCE counters says nothing";
  EXPECT_TRUE(NoTraffic().known);
  EXPECT_EQ(NoTraffic().packets, 0u);
}

TEST(RocePort, FactoryDefaultsWithoutTrafficIsUnconfigured) {
  const RocePortClass c = Classify(FactoryDefaults(), NoTraffic());
  EXPECT_FALSE(c.checked);
  EXPECT_EQ(c.reason, RocePortReason::kNoRoceTraffic);
  EXPECT_EQ(RocePortReasonName(c.reason), "no_roce_traffic");
  EXPECT_NE(c.detail.find("factory defaults"), std::string::npos) << c.detail;
}

// Criterion (a): each lossless setting alone makes the port a configured one.
TEST(RocePort, AnyLosslessSettingMakesItAConfiguredRocePort) {
  ObservedQos pfc = FactoryDefaults();
  pfc.dcb.value.pfc->enabled_mask = 0x08;
  ObservedQos dscp = FactoryDefaults();  // one DSCP entry: mlx5 trusts DSCP then
  dscp.dcb.value.apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, 3, 26});
  ObservedQos tclass = FactoryDefaults();
  tclass.roce_tos[0].tos.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(106);
  for (const ObservedQos* o : {&pfc, &dscp, &tclass}) {
    const RocePortClass c = Classify(*o, NoTraffic());
    EXPECT_TRUE(c.checked) << c.detail;
    EXPECT_EQ(c.reason, RocePortReason::kConfigured) << c.detail;
  }
  EXPECT_EQ(Classify(pfc, NoTraffic()).detail, "configured: pfc [3]");
  EXPECT_EQ(Classify(dscp, NoTraffic()).detail, "configured: trust dscp, 1 DSCP APP entry");
  EXPECT_EQ(Classify(tclass, NoTraffic()).detail, "configured: traffic_class 106 on mlx5_1/1");
  // A PCP APP entry is not a lossless DSCP setting.
  ObservedQos pcp = FactoryDefaults();
  pcp.dcb.value.apps.push_back(DcbApp{DCB_APP_SEL_PCP, 3, 3});
  EXPECT_FALSE(Classify(pcp, NoTraffic()).checked);
}

// Criterion (b): RoCE traffic on a port at factory defaults makes it a RoCE port.
TEST(RocePort, RoceTrafficMakesAFactoryDefaultPortARocePort) {
  const CounterSet ethtool = Counters({"rx_vport_rdma_unicast_packets"}, {1});
  const RocePortClass c = Classify(FactoryDefaults(), RoceTrafficOf(&ethtool, {}));
  EXPECT_TRUE(c.checked);
  EXPECT_EQ(c.reason, RocePortReason::kTraffic);
  EXPECT_NE(c.detail.find("rx_vport_rdma_unicast_packets 1"), std::string::npos) << c.detail;
}

// Criterion (c): what this process remembers of the port.
TEST(RocePort, ARememberedPortStaysARocePort) {
  const RocePortClass c =
      Classify(FactoryDefaults(), NoTraffic(), "default", RocePorts::kAuto, "in sync earlier");
  EXPECT_TRUE(c.checked);
  EXPECT_EQ(c.reason, RocePortReason::kRemembered);
}

// Criterion (d): the site names the port (a rule), or asks for every port.
TEST(RocePort, ARuleOrRocePortsAllChecksAFactoryDefaultPort) {
  const RocePortClass rule = Classify(FactoryDefaults(), NoTraffic(), "rails");
  EXPECT_TRUE(rule.checked);
  EXPECT_EQ(rule.reason, RocePortReason::kRule);
  const RocePortClass all = Classify(FactoryDefaults(), NoTraffic(), "default", RocePorts::kAll);
  EXPECT_TRUE(all.checked);
  EXPECT_EQ(all.reason, RocePortReason::kAllPorts);
}

// A doubt never hides drift: unreadable DCB or unreadable counters leave the port checked.
TEST(RocePort, WhatCannotBeReadIsCheckedNotHidden) {
  ObservedQos failed = FactoryDefaults();
  failed.dcb = Observed<QosState>::Failed("EIO");
  EXPECT_EQ(Classify(failed, NoTraffic()).reason, RocePortReason::kUnknown);
  EXPECT_TRUE(Classify(failed, NoTraffic()).checked);
  const RocePortClass unread = Classify(FactoryDefaults(), RoceTraffic{});
  EXPECT_TRUE(unread.checked);
  EXPECT_EQ(unread.reason, RocePortReason::kUnknown);
}

TEST(RocePortMemory, RemembersConfiguredTrafficAndInSyncPortsByIdentity) {
  RocePortMemory memory;
  const DeviceDrift drift = EvaluateDrift(DefaultPolicy().defaults, FactoryDefaults());
  memory.Learn("pci:0000:3b:00.1", Classify(FactoryDefaults(), NoTraffic()), drift);
  EXPECT_EQ(memory.Remembered("pci:0000:3b:00.1"), "") << "unconfigured and drifted: nothing";

  ObservedQos pfc = FactoryDefaults();
  pfc.dcb.value.pfc->enabled_mask = 0x08;
  memory.Learn("pci:0000:3b:00.1", Classify(pfc, NoTraffic()), drift);
  EXPECT_NE(memory.Remembered("pci:0000:3b:00.1").find("pfc [3]"), std::string::npos);
  EXPECT_EQ(memory.Remembered("pci:0000:3b:00.0"), "") << "kept per PCI function";

  DeviceDrift in_sync;
  in_sync.fields.push_back(FieldVerdict{QosField::kPfc, FieldStatus::kInSync, "[3]", "[3]", ""});
  memory.Learn("pci:0000:3b:00.0", Classify(FactoryDefaults(), NoTraffic(), "rails"), in_sync);
  EXPECT_EQ(memory.Remembered("pci:0000:3b:00.0"), "in sync earlier in this process");

  DeviceDrift unverifiable;
  unverifiable.fields.push_back(
      FieldVerdict{QosField::kRoceTos, FieldStatus::kAbsent, "106", "absent", ""});
  memory.Learn("netdev:x", Classify(FactoryDefaults(), NoTraffic(), "rails"), unverifiable);
  EXPECT_EQ(memory.Remembered("netdev:x"), "") << "nothing verified is not in sync";
}

TEST(RocePortMemory, ALastKnownReadingStandsInForAFailedOne) {
  RocePortMemory memory;
  EXPECT_FALSE(memory.WithLastKnown("pci:a", RoceTraffic{}).known) << "nothing known yet";
  memory.NoteTraffic("pci:a", NoTraffic());
  memory.NoteTraffic("pci:a", RoceTraffic{});  // a failed read does not replace it
  const RoceTraffic last = memory.WithLastKnown("pci:a", RoceTraffic{});
  EXPECT_TRUE(last.known);
  EXPECT_EQ(last.packets, 0u);
}

}  // namespace
}  // namespace roceqos
