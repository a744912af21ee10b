#include "exporter/qos/switch_compare.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>

#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/lldp_neighbors.h"
#include "tests/unit/support/qos_observation.h"

namespace roceqos {
namespace {

using lldp_test::Leaf;

// A leaf port configured like the host's standard policy: PFC on 3, DSCP 26 -> 3, MFS 9216.
ObservedQos Host(uint32_t mtu = 9000) {
  ObservedQos host = qos_test::DefaultPolicyObservation();
  host.mtu = Observed<uint32_t>::Ok(mtu);
  return host;
}

const FrameDecision kTagged{FrameTagging::kTrustPcp, ""};
const FrameDecision kUntagged{FrameTagging::kUntagged, ""};

SwitchVerdict Field(const std::vector<SwitchVerdict>& verdicts, SwitchField field) {
  for (const auto& v : verdicts)
    if (v.field == field) return v;
  ADD_FAILURE() << "no verdict for " << SwitchFieldName(field);
  return {};
}

TEST(SwitchCompareTest, AStandardLeafAgreesWithAStandardHost) {
  const auto verdicts = CompareWithSwitch(Host(), Leaf(), kTagged);
  ASSERT_EQ(verdicts.size(), 3u);
  for (const auto& v : verdicts)
    EXPECT_EQ(v.status, FieldStatus::kInSync) << SwitchFieldName(v.field);
  EXPECT_EQ(Field(verdicts, SwitchField::kMtu).host, "9000 (tagged frame 9022: trust pcp)");
  EXPECT_EQ(Field(verdicts, SwitchField::kDscpPrio).switch_side, "{26:3}");
}

TEST(SwitchCompareTest, PfcOnAPriorityTheNicDoesNotPause) {
  lldp::Neighbor leaf = Leaf();
  leaf.dcbx.pfc_configuration->enabled_mask = 0x18;  // {3, 4}
  const SwitchVerdict pfc = Field(CompareWithSwitch(Host(), leaf, kTagged), SwitchField::kPfc);
  EXPECT_EQ(pfc.status, FieldStatus::kDrift);
  EXPECT_EQ(pfc.host, "[3]");
  EXPECT_EQ(pfc.switch_side, "[3, 4]");
  EXPECT_FALSE(pfc.why.empty());
}

TEST(SwitchCompareTest, TaggedFrameSizeCountsHeaderTagAndFcs) {
  // 9194 + 22 = 9216 fits exactly; one byte more does not; 9216 (the checklist's case) neither.
  EXPECT_EQ(Field(CompareWithSwitch(Host(9194), Leaf(), kTagged), SwitchField::kMtu).status,
            FieldStatus::kInSync);
  EXPECT_EQ(Field(CompareWithSwitch(Host(9195), Leaf(), kTagged), SwitchField::kMtu).status,
            FieldStatus::kDrift);
  const SwitchVerdict mtu =
      Field(CompareWithSwitch(Host(9216), Leaf(), kTagged), SwitchField::kMtu);
  EXPECT_EQ(mtu.status, FieldStatus::kDrift);
  EXPECT_EQ(mtu.host, "9216 (tagged frame 9238: trust pcp)");
  EXPECT_EQ(mtu.switch_side, "9216");
}

// --- the frame-size check, tagged and untagged ----------------------------------------------

lldp::Neighbor LeafWithMfs(uint32_t mfs) {
  lldp::Neighbor leaf = Leaf();
  leaf.max_frame_size = mfs;
  return leaf;
}

FieldStatus MtuStatus(uint32_t mfs, const FrameDecision& frame) {
  return Field(CompareWithSwitch(Host(9000), LeafWithMfs(mfs), frame), SwitchField::kMtu).status;
}

TEST(SwitchCompareTest, Mtu9000AgainstMfs9018And9022And9216) {
  // Untagged: 9000 + 18 fits 9018 exactly. Tagged: 9018 is 4 bytes short, 9022 fits exactly.
  EXPECT_EQ(MtuStatus(9018, kUntagged), FieldStatus::kInSync);
  EXPECT_EQ(MtuStatus(9022, kUntagged), FieldStatus::kInSync);
  EXPECT_EQ(MtuStatus(9216, kUntagged), FieldStatus::kInSync);
  EXPECT_EQ(MtuStatus(9017, kUntagged), FieldStatus::kDrift);
  EXPECT_EQ(MtuStatus(9018, kTagged), FieldStatus::kDrift);
  EXPECT_EQ(MtuStatus(9021, kTagged), FieldStatus::kDrift);
  EXPECT_EQ(MtuStatus(9022, kTagged), FieldStatus::kInSync);
  EXPECT_EQ(MtuStatus(9216, kTagged), FieldStatus::kInSync);
  // Every reason to count the tag counts it the same way.
  for (const auto& reason : kFrameTaggingNames) {
    const FrameDecision frame{reason.value, "x"};
    EXPECT_EQ(MtuStatus(9018, frame), frame.Tagged() ? FieldStatus::kDrift : FieldStatus::kInSync)
        << reason.name;
  }
}

TEST(SwitchCompareTest, TheHostSideSaysWhichOverheadItCounted) {
  const SwitchVerdict untagged =
      Field(CompareWithSwitch(Host(9000), LeafWithMfs(9018), kUntagged), SwitchField::kMtu);
  EXPECT_EQ(untagged.host, "9000 (untagged frame 9018)");
  EXPECT_EQ(untagged.switch_side, "9018");
  const SwitchVerdict vlan =
      Field(CompareWithSwitch(Host(9000), LeafWithMfs(9018),
                              FrameDecision{FrameTagging::kVlanUpper, "ens1f0np0.100"}),
            SwitchField::kMtu);
  EXPECT_EQ(vlan.host, "9000 (tagged frame 9022: VLAN ens1f0np0.100)");
  EXPECT_FALSE(vlan.why.empty());
}

// A RoCE port with DSCP trust, no VLAN and its GIDs on its own netdev: every fact says untagged.
Device RocePort() {
  Device device;
  device.name = "ens1f0np0";
  RdmaPort port;
  port.device = "mlx5_0";
  port.port = 1;
  port.netdev = "ens1f0np0";
  device.rdma_ports.push_back(port);
  return device;
}

NetdevRoceGids GidsOn(std::vector<std::string> netdevs) {
  std::vector<RoceGid> gids;
  uint32_t index = 0;
  for (std::string& netdev : netdevs)
    gids.push_back(
        {index++, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", GidType::kRoceV2, std::move(netdev)});
  return NetdevRoceGids::Ok(std::move(gids));
}

TEST(FrameTaggingTest, UntaggedOnlyWithDscpTrustNoVlanAndOwnGids) {
  const FrameDecision frame = DecideFrameTagging(Host(), RocePort(), GidsOn({"ens1f0np0"}));
  EXPECT_EQ(frame.tagging, FrameTagging::kUntagged);
  EXPECT_EQ(frame.OverheadBytes(), 18u);
  EXPECT_EQ(DecideFrameTagging(Host(), RocePort(), NetdevRoceGids::Ok({})).tagging,
            FrameTagging::kUntagged);
}

TEST(FrameTaggingTest, PcpTrustIsTagged) {
  ObservedQos pcp = Host();
  std::erase_if(pcp.dcb.value.apps, [](const DcbApp& a) { return a.selector == 5; });
  pcp.dcb.value.app_trust.reset();
  ASSERT_EQ(pcp.dcb.value.Trust(), TrustMode::kPcp);
  const FrameDecision frame = DecideFrameTagging(pcp, RocePort(), GidsOn({"ens1f0np0"}));
  EXPECT_EQ(frame.tagging, FrameTagging::kTrustPcp);
  EXPECT_EQ(frame.OverheadBytes(), 22u);
  EXPECT_EQ(Field(CompareWithSwitch(pcp, LeafWithMfs(9018), frame), SwitchField::kMtu).status,
            FieldStatus::kDrift);
}

TEST(FrameTaggingTest, AnUnreadableOrMissingTrustIsTagged) {
  ObservedQos failed = Host();
  failed.dcb = Observed<QosState>::Failed("EPERM");
  EXPECT_EQ(DecideFrameTagging(failed, RocePort(), GidsOn({})).tagging,
            FrameTagging::kTrustUnknown);
  ObservedQos no_dcb = Host();
  no_dcb.dcb = Observed<QosState>::Absent();
  const FrameDecision frame = DecideFrameTagging(no_dcb, RocePort(), GidsOn({}));
  EXPECT_EQ(frame.tagging, FrameTagging::kTrustUnknown);
  EXPECT_EQ(frame.Text(), "trust unknown, no DCB");
}

TEST(FrameTaggingTest, AVlanNetdevOnItIsTagged) {
  Device device = RocePort();
  device.vlan_uppers = {"ens1f0np0.100"};
  const FrameDecision frame = DecideFrameTagging(Host(), device, GidsOn({"ens1f0np0"}));
  EXPECT_EQ(frame.tagging, FrameTagging::kVlanUpper);
  EXPECT_EQ(frame.detail, "ens1f0np0.100");
}

TEST(FrameTaggingTest, AGidOnAnotherNetdevIsTaggedButNotOnItsBondOrPortNetdev) {
  // A VLAN in a container's netns: discovery cannot see it, the GID table names it.
  const FrameDecision far =
      DecideFrameTagging(Host(), RocePort(), GidsOn({"ens1f0np0", "vlan100"}));
  EXPECT_EQ(far.tagging, FrameTagging::kGidOnNetdev);
  EXPECT_EQ(far.Text(), "RoCE GID on vlan100");

  // RoCE LAG: the GIDs are on the bond; PORT_GET names the active member.
  Device member = RocePort();
  member.name = "ens1f1np1";
  member.master = "bond0";
  EXPECT_EQ(DecideFrameTagging(Host(), member, GidsOn({"bond0", "ens1f0np0"})).tagging,
            FrameTagging::kUntagged);
}

TEST(FrameTaggingTest, AGidTableNotReadIsTagged) {
  const FrameDecision frame =
      DecideFrameTagging(Host(), RocePort(), NetdevRoceGids::Failed("mlx5_0 port 1: EACCES"));
  EXPECT_EQ(frame.tagging, FrameTagging::kGidsUnknown);
  EXPECT_EQ(FrameTaggingName(frame.tagging), "gids_unknown");
  LldpState state;
  EXPECT_TRUE(RoceGidsOf(state, "ens1f0np0").failed());
  state.roce_gids["ens1f0np0"] = GidsOn({"ens1f0np0"});
  EXPECT_TRUE(RoceGidsOf(state, "ens1f0np0").ok());
}

TEST(SwitchCompareTest, DscpOnAnotherPriorityOrMissingOnTheHost) {
  lldp::Neighbor leaf = Leaf();
  leaf.dcbx.application_priority->entries[0].priority = 4;
  const SwitchVerdict other =
      Field(CompareWithSwitch(Host(), leaf, kTagged), SwitchField::kDscpPrio);
  EXPECT_EQ(other.status, FieldStatus::kDrift);
  EXPECT_EQ(other.host, "{26:3}");
  EXPECT_EQ(other.switch_side, "{26:4}");

  ObservedQos host = Host();
  std::erase_if(host.dcb.value.apps, [](const DcbApp& a) { return a.protocol == 26; });
  const SwitchVerdict missing =
      Field(CompareWithSwitch(host, Leaf(), kTagged), SwitchField::kDscpPrio);
  EXPECT_EQ(missing.status, FieldStatus::kDrift);
  EXPECT_EQ(missing.host, "{}");
}

TEST(SwitchCompareTest, HostEntriesTheSwitchDoesNotListAreNotCompared) {
  // The host maps all 64 DSCPs; the switch lists only 26: only 26 counts.
  EXPECT_EQ(Field(CompareWithSwitch(Host(), Leaf(), kTagged), SwitchField::kDscpPrio).status,
            FieldStatus::kInSync);
}

TEST(SwitchCompareTest, NothingAdvertisedOrUnreadableIsNotComparable) {
  lldp::Neighbor bare;
  bare.system_name = "leaf02";
  for (const auto& v : CompareWithSwitch(Host(), bare, kTagged))
    EXPECT_EQ(v.status, FieldStatus::kAbsent) << SwitchFieldName(v.field);

  ObservedQos unread = Host();
  unread.dcb = Observed<QosState>::Failed("EPERM");
  unread.mtu = Observed<uint32_t>::Failed("gone");
  for (const auto& v : CompareWithSwitch(unread, Leaf(), kTagged)) {
    EXPECT_EQ(v.status, FieldStatus::kAbsent) << SwitchFieldName(v.field);
    EXPECT_EQ(v.host, "not readable");
  }
}

TEST(SwitchCompareTest, DescribeNamesTheSwitchAndPort) {
  EXPECT_EQ(DescribeNeighbor(Leaf()), "leaf01 Ethernet12 (chassis 0c:29:aa:bb:cc:01)");
  lldp::Neighbor unnamed = Leaf();
  unnamed.system_name.clear();
  EXPECT_EQ(DescribeNeighbor(unnamed), "0c:29:aa:bb:cc:01 Ethernet12 (chassis 0c:29:aa:bb:cc:01)");
}

// The sampler attaches the LLDP state to every draft; the comparison of a device is computed
// again only when the Device, its QoS state or the LLDP state is another object.
DeviceSnapshot DeviceWithQos(uint32_t mtu) {
  DeviceSnapshot d;
  d.device = std::make_shared<const Device>(testing::MakeDevice("eth0", 2));
  auto qos = std::make_shared<QosDeviceState>();
  qos->observed = Host(mtu);
  d.qos = qos;
  return d;
}

std::shared_ptr<const LldpState> LeafOnEth0() {
  auto state = std::make_shared<LldpState>();
  state->view.emplace();
  state->view->ports["eth0"] =
      lldp::LocalPort{.frames_received = 1, .neighbors = {Leaf()}, .error = {}};
  return state;
}

TEST(SwitchComparerTest, TheSameInputsKeepTheComparisonAndAnyNewOneComputesItAgain) {
  SwitchComparer comparer;
  Snapshot first;
  first.devices = {DeviceWithQos(9000)};
  first.lldp = LeafOnEth0();
  comparer.Compare(first);
  const auto computed = first.devices[0].switch_comparison;
  ASSERT_NE(computed, nullptr);

  Snapshot carried = first;  // the next sample: the same objects
  carried.devices[0].switch_comparison = nullptr;
  comparer.Compare(carried);
  EXPECT_EQ(carried.devices[0].switch_comparison, computed);

  Snapshot new_qos = first;  // the QoS stage read the NIC again: 9216 no longer fits
  new_qos.devices[0].qos = DeviceWithQos(9216).qos;
  comparer.Compare(new_qos);
  ASSERT_NE(new_qos.devices[0].switch_comparison, nullptr);
  EXPECT_NE(new_qos.devices[0].switch_comparison, computed);
  bool mtu_drift = false;
  for (const auto& field : new_qos.devices[0].switch_comparison->fields)
    if (field.field == SwitchFieldName(SwitchField::kMtu)) mtu_drift = field.drift;
  EXPECT_TRUE(mtu_drift);

  Snapshot new_lldp = new_qos;  // a new LLDP round, the same device and QoS state
  const auto before = new_lldp.devices[0].switch_comparison;
  new_lldp.lldp = LeafOnEth0();
  comparer.Compare(new_lldp);
  EXPECT_NE(new_lldp.devices[0].switch_comparison, before);

  Snapshot no_lldp = new_lldp;  // the poller's state gone: nothing to compare with
  no_lldp.lldp = nullptr;
  comparer.Compare(no_lldp);
  EXPECT_EQ(no_lldp.devices[0].switch_comparison, nullptr);
}

}  // namespace
}  // namespace roceqos
