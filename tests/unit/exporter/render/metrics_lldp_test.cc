#include <gtest/gtest.h>
#include <linux/dcbnl.h>

#include <string>

#include "base/utf8.h"
#include "exporter/core/qos_state.h"
#include "exporter/qos/switch_compare.h"
#include "exporter/render/metrics.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/lldp_neighbors.h"
#include "tests/unit/support/metric_families.h"
#include "tests/unit/support/qos_observation.h"

namespace roceqos {
namespace {

using testing::Count;
using testing::Find;
using testing::MakeDevice;
using testing::Value;

lldp::Neighbor Leaf() {
  lldp::Neighbor n = lldp_test::Leaf();
  n.port_description = "to gpu-node-1";
  n.management_address = "10.0.0.1";
  n.changed_at_unix = 1000;
  n.ttl_seconds = 120;
  n.dcbx.pfc_configuration = lldp_test::Pfc(0x18, true);
  n.dcbx.application_priority->entries.insert(n.dcbx.application_priority->entries.begin(),
                                              DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, 4, 26});
  lldp::EtsConfiguration ets;
  ets.tables.prio_tc = {0, 0, 0, 3, 4, 0, 0, 0};
  ets.tables.tc_bandwidth = {50, 0, 0, 25, 25, 0, 0, 0};
  ets.tables.tc_tsa.fill(IEEE_8021QAZ_TSA_ETS);
  n.dcbx.ets_configuration = ets;
  return n;
}

DeviceSnapshot Device(const std::string& name, uint32_t mtu = 9000,
                      OperState oper = OperState::kUp) {
  DeviceSnapshot d;
  auto device = MakeDevice(name, 2);
  device.oper_state = oper;
  d.device = std::make_shared<const roceqos::Device>(device);
  auto qos = std::make_shared<QosDeviceState>();
  qos->observed = qos_test::DefaultPolicyObservation();
  qos->observed.mtu = Observed<uint32_t>::Ok(mtu);
  d.qos = qos;
  return d;
}

// As the daemon attaches the LLDP poller's state: with the host-vs-switch comparison of every
// device (exporter/app/main.cc AttachPollers).
void Attach(Snapshot& s, std::shared_ptr<const LldpState> state) {
  s.lldp = std::move(state);
  SwitchComparer().Compare(s);
}

Snapshot WithLldp() {
  Snapshot s;
  s.devices = {Device("eth0"), Device("eth1"), Device("eth2", 9000, OperState::kDown)};
  auto state = std::make_shared<LldpState>();
  state->view.emplace();
  lldp::LocalPort port;
  port.frames_received = 42;
  port.neighbors.push_back(Leaf());
  state->view->ports["eth0"] = port;
  state->view->ports["eth1"] = lldp::LocalPort{.frames_received = 0, .neighbors = {}, .error = {}};
  state->view->ports["gone"] = port;  // left the selection: never rendered
  state->read_at_unix = 1030;
  state->interval_seconds = 10;
  state->queries = 5;
  state->errors = {{"lldpd_not_running", 1}, {"malformed_tlv", 0}};
  Attach(s, state);
  return s;
}

TEST(MetricsLldpTest, TheNeighbourAndWhatItAdvertises) {
  const Snapshot s = WithLldp();
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_lldp_neighbor_present", {{"netdev", "eth0"}}), 1);
  EXPECT_EQ(Value(f, "roce_lldp_neighbor_info",
                  {{"netdev", "eth0"},
                   {"chassis_id", "0c:29:aa:bb:cc:01"},
                   {"system_name", "leaf01"},
                   {"port_id", "Ethernet12"},
                   {"port_description", "to gpu-node-1"},
                   {"management_address", "10.0.0.1"}}),
            1);
  EXPECT_EQ(Value(f, "roce_lldp_neighbor_age_seconds", {{"netdev", "eth0"}}), 30);
  EXPECT_EQ(Value(f, "roce_lldp_neighbor_ttl_seconds", {{"netdev", "eth0"}}), 120);
  EXPECT_EQ(Value(f, "roce_lldp_frames_received_total", {{"netdev", "eth0"}}), 42);
  EXPECT_EQ(Value(f, "roce_lldp_switch_pfc_enabled", {{"netdev", "eth0"}, {"prio", "3"}}), 1);
  EXPECT_EQ(Value(f, "roce_lldp_switch_pfc_enabled", {{"netdev", "eth0"}, {"prio", "4"}}), 1);
  EXPECT_EQ(Value(f, "roce_lldp_switch_pfc_enabled", {{"netdev", "eth0"}, {"prio", "0"}}), 0);
  EXPECT_EQ(Value(f, "roce_lldp_switch_pfc_willing", {{"netdev", "eth0"}}), 1);
  EXPECT_EQ(Value(f, "roce_lldp_switch_pfc_capability", {{"netdev", "eth0"}}), 8);
  // Two entries for DSCP 26: the lowest priority, as roce_qos_dscp_prio.
  EXPECT_EQ(Value(f, "roce_lldp_switch_dscp_prio", {{"netdev", "eth0"}, {"dscp", "26"}}), 3);
  EXPECT_EQ(Count(f, "roce_lldp_switch_dscp_prio"), 1u);
  EXPECT_EQ(Value(f, "roce_lldp_switch_prio_tc", {{"netdev", "eth0"}, {"prio", "4"}}), 4);
  EXPECT_EQ(Value(f, "roce_lldp_switch_ets_bandwidth_ratio", {{"netdev", "eth0"}, {"tc", "3"}}),
            0.25);
  EXPECT_EQ(Value(f, "roce_lldp_switch_ets_tsa", {{"netdev", "eth0"}, {"tc", "0"}, {"tsa", "ets"}}),
            1);
  EXPECT_EQ(Value(f, "roce_lldp_switch_max_frame_size_bytes", {{"netdev", "eth0"}}), 9216);
}

TEST(MetricsLldpTest, MismatchPerComparableField) {
  const Snapshot s = WithLldp();
  const Families f = RenderSnapshot(&s);
  // The switch runs PFC on {3, 4}, the host on {3}; DSCP 26 -> 3 on both; 9022 <= 9216.
  EXPECT_EQ(Value(f, "roce_qos_switch_mismatch", {{"netdev", "eth0"}, {"field", "pfc"}}), 1);
  EXPECT_EQ(Value(f, "roce_qos_switch_mismatch", {{"netdev", "eth0"}, {"field", "dscp_prio"}}), 0);
  EXPECT_EQ(Value(f, "roce_qos_switch_mismatch", {{"netdev", "eth0"}, {"field", "mtu"}}), 0);
  EXPECT_EQ(Count(f, "roce_qos_switch_mismatch"), 3u);
}

// eth0's switch port advertises 9018 (by default): MTU 9000 fits untagged frames only.
Snapshot WithMfs9018(std::optional<NetdevRoceGids> gids, std::vector<std::string> vlans = {},
                     std::optional<uint32_t> mfs = 9018) {
  Snapshot s = WithLldp();
  auto state = std::make_shared<LldpState>(*s.lldp);
  state->view->ports["eth0"].neighbors[0].max_frame_size = mfs;
  if (gids) state->roce_gids["eth0"] = *gids;
  auto device = std::make_shared<roceqos::Device>(*s.devices[0].device);
  device->vlan_uppers = std::move(vlans);
  s.devices[0].device = device;
  Attach(s, state);
  return s;
}

double Overhead(const Families& f, std::string_view tagging) {
  return Value(f, "roce_qos_switch_frame_overhead_bytes",
               {{"netdev", "eth0"}, {"tagging", std::string(tagging)}});
}

TEST(MetricsLldpTest, TheFrameOverheadFollowsWhatTheHostKnowsOfTheTag) {
  // DSCP trust, the GIDs on eth0 itself: untagged, 9018 fits.
  const NetdevRoceGids own = NetdevRoceGids::Ok(
      {RoceGid{0, "fe80:0000:0000:0000:0000:0000:0000:0001", GidType::kRoceV2, "eth0"}});
  Snapshot s = WithMfs9018(own);
  Families f = RenderSnapshot(&s);
  EXPECT_EQ(Overhead(f, "untagged"), 18);
  EXPECT_EQ(Count(f, "roce_qos_switch_frame_overhead_bytes"), 1u);
  EXPECT_EQ(Value(f, "roce_qos_switch_mismatch", {{"netdev", "eth0"}, {"field", "mtu"}}), 0);

  // A VLAN on eth0: tagged, 9022 > 9018.
  s = WithMfs9018(own, {"eth0.100"});
  f = RenderSnapshot(&s);
  EXPECT_EQ(Overhead(f, "vlan_upper"), 22);
  EXPECT_EQ(Value(f, "roce_qos_switch_mismatch", {{"netdev", "eth0"}, {"field", "mtu"}}), 1);

  // The LLDP round read no GIDs for eth0: unknown counts the tag.
  s = WithMfs9018(std::nullopt);
  f = RenderSnapshot(&s);
  EXPECT_EQ(Overhead(f, "gids_unknown"), 22);
  EXPECT_EQ(Value(f, "roce_qos_switch_mismatch", {{"netdev", "eth0"}, {"field", "mtu"}}), 1);

  // No Maximum Frame Size TLV: no mtu verdict, no overhead series.
  s = WithMfs9018(own, {}, std::nullopt);
  f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_qos_switch_frame_overhead_bytes"), 0u);
}

// The comparison is the snapshot's: the renderer formats it and never compares on its own.
TEST(MetricsLldpTest, RendersThePrecomputedComparisonOnly) {
  Snapshot s = WithLldp();
  auto compared = std::make_shared<SwitchComparison>();
  compared->fields = {{"pfc", false}, {"mtu", true}};
  compared->frame = SwitchFrameOverhead{"trust_pcp", 22};
  s.devices[0].switch_comparison = compared;
  Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_qos_switch_mismatch", {{"netdev", "eth0"}, {"field", "pfc"}}), 0);
  EXPECT_EQ(Value(f, "roce_qos_switch_mismatch", {{"netdev", "eth0"}, {"field", "mtu"}}), 1);
  EXPECT_EQ(Count(f, "roce_qos_switch_mismatch"), 2u);
  EXPECT_EQ(Overhead(f, "trust_pcp"), 22);

  s.devices[0].switch_comparison = nullptr;  // QoS state and neighbour, but nothing compared
  f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_qos_switch_mismatch"), 0u);
  EXPECT_EQ(Count(f, "roce_qos_switch_frame_overhead_bytes"), 0u);
}

TEST(MetricsLldpTest, NoComparisonWithoutTheHostsQosOrTheLldpState) {
  Snapshot s = WithLldp();
  EXPECT_NE(s.devices[0].switch_comparison, nullptr);
  EXPECT_EQ(s.devices[1].switch_comparison, nullptr);  // no neighbour
  s.devices[0].qos = nullptr;
  Attach(s, s.lldp);
  EXPECT_EQ(s.devices[0].switch_comparison, nullptr);
  s = WithLldp();
  Attach(s, nullptr);
  EXPECT_EQ(s.devices[0].switch_comparison, nullptr);
}

TEST(MetricsLldpTest, NoNeighbourHasOnlyPresenceAndReason) {
  const Snapshot s = WithLldp();
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_lldp_neighbor_present", {{"netdev", "eth1"}}), 0);
  EXPECT_EQ(
      Value(f, "roce_lldp_neighbor_absent_reason", {{"netdev", "eth1"}, {"reason", "no_frame"}}),
      1);
  EXPECT_EQ(
      Value(f, "roce_lldp_neighbor_absent_reason", {{"netdev", "eth2"}, {"reason", "link_down"}}),
      1);
  EXPECT_EQ(Count(f, "roce_lldp_neighbor_absent_reason"), 2u);
  // One info, one set of switch series: eth0's. "gone" is not in the snapshot.
  EXPECT_EQ(Count(f, "roce_lldp_neighbor_info"), 1u);
  EXPECT_EQ(Count(f, "roce_lldp_neighbor_present"), 3u);
  EXPECT_EQ(Count(f, "roce_lldp_switch_pfc_enabled"), 8u);
}

TEST(MetricsLldpTest, NeighbourCountsAndEachPortsErrors) {
  Snapshot s = WithLldp();
  auto state = std::make_shared<LldpState>(*s.lldp);
  state->view->ports["eth0"].neighbors.push_back(lldp_test::Named("hub", "p1"));
  state->view->ports["eth1"].error = "lldpd socket x: port eth1: not found";
  state->port_errors["eth0"] = {{"port_unreadable", 0}, {"malformed_app_entry", 3}};
  state->port_errors["eth1"] = {{"port_unreadable", 2}, {"malformed_app_entry", 0}};
  state->port_errors["gone"] = {{"port_unreadable", 9}};
  Attach(s, state);
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_lldp_neighbors", {{"netdev", "eth0"}}), 2);
  // eth1's answer failed: how many neighbours it has is unknown, not 0; eth2 lldpd does not list.
  EXPECT_EQ(Count(f, "roce_lldp_neighbors"), 1u);
  EXPECT_EQ(
      Value(f, "roce_lldp_neighbor_absent_reason", {{"netdev", "eth1"}, {"reason", "lldpd_error"}}),
      1);
  // The first neighbour is the one shown: one info series per netdev keeps the alerts' joins
  // one-to-one.
  EXPECT_EQ(Count(f, "roce_lldp_neighbor_info"), 1u);
  EXPECT_EQ(Value(f, "roce_lldp_port_errors_total",
                  {{"netdev", "eth0"}, {"reason", "malformed_app_entry"}}),
            3);
  EXPECT_EQ(
      Value(f, "roce_lldp_port_errors_total", {{"netdev", "eth1"}, {"reason", "port_unreadable"}}),
      2);
  EXPECT_EQ(Count(f, "roce_lldp_port_errors_total"), 4u);  // "gone" is not in the snapshot
}

TEST(MetricsLldpTest, AFailedQueryGivesEveryNetdevItsReason) {
  for (LldpAbsence reason : {LldpAbsence::kPermissionDenied, LldpAbsence::kLldpdIncompatible}) {
    Snapshot s = WithLldp();
    auto failed = std::make_shared<LldpState>();
    failed->failure = reason;
    Attach(s, failed);
    const Families f = RenderSnapshot(&s);
    EXPECT_EQ(Count(f, "roce_lldp_neighbor_info"), 0u);
    EXPECT_EQ(Count(f, "roce_qos_switch_mismatch"), 0u);
    EXPECT_EQ(Count(f, "roce_lldp_frames_received_total"), 0u);
    for (const char* netdev : {"eth0", "eth1", "eth2"})
      EXPECT_EQ(Value(f, "roce_lldp_neighbor_absent_reason",
                      {{"netdev", netdev}, {"reason", std::string(LldpAbsenceName(reason))}}),
                1);
  }
}

TEST(MetricsLldpTest, SelfMetricsAndNothingWhenOff) {
  const Snapshot s = WithLldp();
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_exporter_lldp_interval_seconds", {}), 10);
  EXPECT_EQ(Value(f, "roce_exporter_lldp_queries_total", {}), 5);
  EXPECT_EQ(Value(f, "roce_exporter_lldp_query_errors_total", {{"reason", "lldpd_not_running"}}),
            1);
  EXPECT_EQ(Count(f, "roce_exporter_lldp_library_info"), 0u);  // the library never loaded

  Snapshot loaded = WithLldp();
  auto state = std::make_shared<LldpState>(*loaded.lldp);
  state->library = "/usr/lib/x86_64-linux-gnu/liblldpctl.so.4.9.1";
  Attach(loaded, state);
  EXPECT_EQ(Value(RenderSnapshot(&loaded), "roce_exporter_lldp_library_info",
                  {{"file", "/usr/lib/x86_64-linux-gnu/liblldpctl.so.4.9.1"}}),
            1);

  Snapshot off = WithLldp();
  Attach(off, nullptr);
  const Families none = RenderSnapshot(&off);
  for (const auto& family : none) {
    EXPECT_EQ(family.name.find("lldp"), std::string::npos) << family.name;
    EXPECT_NE(family.name, "roce_qos_switch_mismatch");
  }
}

// /metrics writes the text directly: byte for byte prometheus-cpp's serialization of the
// families (LLDP strings are free text from the switch).
TEST(MetricsLldpTest, DirectTextIsTheSerializersText) {
  const Snapshot s = WithLldp();
  EXPECT_EQ(testing::DirectText(&s), testing::SerializedText(&s));
}

// Bytes that are not UTF-8, in a neighbour (a switch's system name) and in a netdev name (the
// kernel allows any byte but '/', ':', whitespace and NUL): the body stays valid UTF-8, so
// Prometheus does not reject the whole scrape, and both rendering paths agree.
TEST(MetricsLldpTest, BytesThatAreNotUtf8NeverReachTheBody) {
  Snapshot s = WithLldp();
  auto state = std::make_shared<LldpState>(*s.lldp);
  lldp::Neighbor odd = Leaf();
  odd.system_name =
      "leaf\xff"
      "01";
  odd.port_id =
      "Eth\xc0\xaf"
      "1";                                       // overlong '/'
  odd.port_description = "\xed\xa0\x80 uplink";  // a surrogate
  state->view->ports["eth0"].neighbors = {odd};
  state->view->ports["eth\xfe"] = state->view->ports["eth0"];
  s.devices.push_back(Device("eth\xfe"));
  Attach(s, state);
  const std::string body = testing::DirectText(&s);
  EXPECT_TRUE(IsValidUtf8(body));
  EXPECT_NE(body.find("system_name=\"leaf\xef\xbf\xbd"
                      "01\""),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("port_id=\"Eth\xef\xbf\xbd\xef\xbf\xbd"
                      "1\""),
            std::string::npos);
  EXPECT_NE(body.find("roce_lldp_neighbor_present{netdev=\"eth\xef\xbf\xbd\"} 1"),
            std::string::npos);
  EXPECT_EQ(body, testing::SerializedText(&s));
}

}  // namespace
}  // namespace roceqos
