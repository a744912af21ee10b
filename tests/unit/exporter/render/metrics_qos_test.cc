// The QoS families rendered from a snapshot (metrics_qos.cc).

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "exporter/core/qos_state.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/policy.h"
#include "exporter/render/metric_table.h"
#include "exporter/render/metrics.h"
#include "tests/unit/support/metric_families.h"

namespace roceqos {
namespace {

using testing::Count;
using testing::Find;
using testing::Value;

// sim0 as after `mlnx_qos --trust dscp --pfc 0,0,0,1,0,0,0,0` with a few extras set, PFC off
// on priority 3 afterwards (drifted), remediation in enforce mode.
Snapshot QosSnapshot() {
  Snapshot s;
  DeviceSnapshot d;
  auto device = std::make_shared<Device>();
  device->name = "sim0";
  d.device = device;

  auto q = std::make_shared<QosDeviceState>();
  QosState st;
  st.pfc = PfcState{8, 0x00, 0, 7};
  EtsState ets;
  ets.prio_tc = {1, 0, 2, 3, 4, 5, 6, 7};
  ets.tc_tsa = {IEEE_8021QAZ_TSA_ETS, IEEE_8021QAZ_TSA_ETS, 0, 0, 0, 0, 0, IEEE_8021QAZ_TSA_VENDOR};
  ets.tc_tx_bw = {40, 60, 0, 0, 0, 0, 0, 0};
  st.ets = ets;
  for (uint16_t dscp = 0; dscp < 64; ++dscp)
    st.apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(dscp / 8), dscp});
  st.apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, 5, 26});  // a second priority for 26
  std::sort(st.apps.begin(), st.apps.end());
  BufferState buf;
  buf.prio_buffer = {0, 0, 0, 1, 0, 0, 0, 0};
  buf.size = {130944, 130944, 0, 0, 0, 0, 0, 0};
  buf.total_size = 262016;
  st.buffer = buf;
  std::array<uint64_t, 8> rate{};
  rate[3] = 25'000'000;  // 25 Gbit/s in Kbit/s
  st.maxrate_kbps = rate;
  st.dcbx = DCB_CAP_DCBX_VER_IEEE | DCB_CAP_DCBX_VER_CEE;  // firmware controlled
  q->observed.dcb = Observed<QosState>::Ok(st);
  for (int p = 0; p < 8; ++p) {
    q->observed.dcqcn.np_enabled[p] = Observed<bool>::Ok(p == 3);
    q->observed.dcqcn.rp_enabled[p] =
        p == 7 ? Observed<bool>::Failed("EIO", EIO) : Observed<bool>::Ok(p == 3);
  }
  q->observed.dcqcn.cnp_dscp = Observed<uint8_t>::Ok(48);
  q->observed.dcqcn.cnp_802p_prio = Observed<uint8_t>::Ok(6);
  PortTos port;
  port.device = "mlx5_0";
  port.port = 1;
  port.tos.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(106);
  q->observed.roce_tos.push_back(port);
  q->observed.pfc_storm_timeout_ms = Observed<uint16_t>::Ok(0xffff);
  q->observed.tcp_ecn = Observed<int>::Ok(1);
  DcqcnParams params;
  params.reaction_point = {{"rpg_ai_rate", 5}};
  params.notification_point = {{"min_time_between_cnps", 4}, {"cnp_dscp", 48}};
  q->observed.dcqcn_params = Observed<DcqcnParams>::Ok(params);

  QosPolicy policy = DefaultPolicy().defaults;
  policy.mtu = 9000;  // absent below
  policy.dcqcn_rp_params = {{"rpg_ai_rate", 5}};
  q->drift = EvaluateDrift(policy, q->observed);
  q->policy_rule = "default";
  q->roce_port = RocePortClass{true, RocePortReason::kConfigured, "configured: trust dscp"};
  q->policy_hash = PolicyFingerprint(policy);
  q->state_hash = StateFingerprint(q->observed);
  q->drift_events = {{QosField::kPfc, 2}, {QosField::kTrust, 0}};
  q->last_change = std::chrono::system_clock::time_point(std::chrono::seconds(1700000100));
  q->remediation = RemediationState::kBackoff;
  q->remediation_counts = {{{QosField::kPfc, "success"}, 1}, {{QosField::kPfc, "mismatch"}, 1}};
  d.qos = q;
  s.devices.push_back(std::move(d));

  auto g = std::make_shared<QosGlobalState>();
  g->policy_reload_success = false;
  g->policy_reload_time = std::chrono::system_clock::time_point(std::chrono::seconds(1700000200));
  g->remediation_mode = RemediationMode::kEnforce;
  g->last_detection_latency_seconds = 0.004;
  g->max_detection_latency_seconds = 0.02;
  g->change_notifications = 12;
  g->monitor_resyncs = {2, 0, 5};  // overflow, read_error, malformed
  g->monitor_running = true;
  g->tcp_ecn = Observed<int>::Ok(1);
  s.qos = g;
  return s;
}

TEST(RenderQos, DcbStateFamilies) {
  Families f = RenderSnapshot(std::make_unique<Snapshot>(QosSnapshot()).get());
  EXPECT_EQ(Value(f, "roce_qos_trust", {{"netdev", "sim0"}, {"mode", "dscp"}}), 1);
  EXPECT_EQ(Value(f, "roce_qos_trust", {{"netdev", "sim0"}, {"mode", "pcp"}}), 0);
  EXPECT_EQ(Value(f, "roce_qos_pfc_enabled", {{"netdev", "sim0"}, {"prio", "3"}}), 0);
  EXPECT_EQ(Count(f, "roce_qos_pfc_enabled"), 8u);
  EXPECT_EQ(Value(f, "roce_qos_pfc_cable_length_meters", {{"netdev", "sim0"}}), 7);
  EXPECT_EQ(Value(f, "roce_qos_prio_tc", {{"netdev", "sim0"}, {"prio", "0"}}), 1);
  EXPECT_DOUBLE_EQ(Value(f, "roce_qos_ets_bandwidth_ratio", {{"netdev", "sim0"}, {"tc", "1"}}),
                   0.6);
  EXPECT_EQ(Value(f, "roce_qos_ets_tsa", {{"netdev", "sim0"}, {"tc", "7"}, {"tsa", "vendor"}}), 1);
  EXPECT_EQ(Count(f, "roce_qos_ets_tsa"), 8u) << "one series per TC: the current TSA";
  EXPECT_EQ(Count(f, "roce_qos_dscp_prio"), 64u) << "one per DSCP even with two entries for 26";
  EXPECT_EQ(Value(f, "roce_qos_dscp_prio", {{"netdev", "sim0"}, {"dscp", "26"}}), 3);
  EXPECT_EQ(Value(f, "roce_qos_dscp_prio", {{"netdev", "sim0"}, {"dscp", "48"}}), 6);
  EXPECT_EQ(Value(f, "roce_qos_prio_buffer", {{"netdev", "sim0"}, {"prio", "3"}}), 1);
  EXPECT_EQ(Value(f, "roce_qos_buffer_size_bytes", {{"netdev", "sim0"}, {"buffer", "1"}}), 130944);
  EXPECT_EQ(Value(f, "roce_qos_buffer_total_bytes", {{"netdev", "sim0"}}), 262016);
  EXPECT_EQ(Value(f, "roce_qos_maxrate_bytes_per_second", {{"netdev", "sim0"}, {"tc", "3"}}),
            25e9 / 8);
  EXPECT_EQ(Value(f, "roce_qos_maxrate_bytes_per_second", {{"netdev", "sim0"}, {"tc", "0"}}), 0);
  EXPECT_EQ(Value(f, "roce_qos_dcbx_mode", {{"netdev", "sim0"}, {"mode", "firmware"}}), 1);
  EXPECT_EQ(Value(f, "roce_qos_dcbx_mode", {{"netdev", "sim0"}, {"mode", "host"}}), 0);
}

TEST(RenderQos, HostFamilies) {
  Families f = RenderSnapshot(std::make_unique<Snapshot>(QosSnapshot()).get());
  EXPECT_EQ(Value(f, "roce_qos_roce_tos", {{"device", "mlx5_0"}, {"port", "1"}}), 106);
  EXPECT_EQ(Value(f, "roce_qos_dcqcn_enabled", {{"netdev", "sim0"}, {"prio", "3"}, {"role", "np"}}),
            1);
  EXPECT_EQ(Value(f, "roce_qos_dcqcn_enabled", {{"netdev", "sim0"}, {"prio", "2"}, {"role", "rp"}}),
            0);
  EXPECT_TRUE(std::isnan(
      Value(f, "roce_qos_dcqcn_enabled", {{"netdev", "sim0"}, {"prio", "7"}, {"role", "rp"}})))
      << "an unreadable value has no series";
  EXPECT_EQ(Value(f, "roce_qos_cnp_dscp", {{"netdev", "sim0"}}), 48);
  EXPECT_EQ(Value(f, "roce_qos_cnp_prio", {{"netdev", "sim0"}}), 6);
  EXPECT_EQ(Value(f, "roce_qos_tcp_ecn", {}), 1);
  EXPECT_DOUBLE_EQ(Value(f, "roce_qos_pfc_storm_prevention_timeout_seconds",
                         {{"netdev", "sim0"}, {"mode", "auto"}}),
                   0.1);
}

TEST(RenderQos, DriftPolicyAndRemediationFamilies) {
  Families f = RenderSnapshot(std::make_unique<Snapshot>(QosSnapshot()).get());
  EXPECT_EQ(Value(f, "roce_qos_drift", {{"netdev", "sim0"}, {"field", "pfc"}}), 1);
  EXPECT_EQ(Value(f, "roce_qos_drift", {{"netdev", "sim0"}, {"field", "trust"}}), 0);
  EXPECT_TRUE(std::isnan(Value(f, "roce_qos_drift", {{"netdev", "sim0"}, {"field", "mtu"}})))
      << "cannot be verified (absent): not drift, no drift series";
  EXPECT_EQ(Value(f, "roce_qos_observed_absent", {{"netdev", "sim0"}, {"field", "mtu"}}), 1);
  EXPECT_TRUE(std::isnan(Value(f, "roce_qos_drift", {{"netdev", "sim0"}, {"field", "dcqcn_rp"}})))
      << "unreadable: no drift series";
  EXPECT_EQ(Value(f, "roce_qos_observed_unreadable", {{"netdev", "sim0"}, {"field", "dcqcn_rp"}}),
            1);
  EXPECT_TRUE(std::isnan(Value(f, "roce_qos_drift", {{"netdev", "sim0"}, {"field", "ets"}})))
      << "unchecked: no series";
  EXPECT_EQ(Value(f, "roce_qos_in_sync", {{"netdev", "sim0"}}), 0);
  EXPECT_EQ(Value(f, "roce_qos_drift_events_total", {{"netdev", "sim0"}, {"field", "pfc"}}), 2);
  EXPECT_EQ(Value(f, "roce_qos_last_change_timestamp_seconds", {{"netdev", "sim0"}}), 1700000100);
  const QosPolicy policy = [] {
    QosPolicy p = DefaultPolicy().defaults;
    p.mtu = 9000;
    p.dcqcn_rp_params = {{"rpg_ai_rate", 5}};
    return p;
  }();
  EXPECT_EQ(Value(f, "roce_qos_policy_info",
                  {{"netdev", "sim0"}, {"rule", "default"}, {"hash", PolicyFingerprint(policy)}}),
            1);
  EXPECT_EQ(Count(f, "roce_qos_state_info"), 1u);
  EXPECT_EQ(Value(f, "roce_qos_remediation_state", {{"netdev", "sim0"}, {"state", "backoff"}}), 1);
  EXPECT_EQ(Value(f, "roce_qos_remediation_state", {{"netdev", "sim0"}, {"state", "gave_up"}}), 0);
  EXPECT_EQ(Value(f, "roce_qos_remediation_given_up", {{"netdev", "sim0"}}), 0);
  EXPECT_EQ(Value(f, "roce_qos_remediations_total",
                  {{"netdev", "sim0"}, {"field", "pfc"}, {"result", "mismatch"}}),
            1);
  EXPECT_EQ(Value(f, "roce_qos_policy_reload_success", {}), 0);
  EXPECT_EQ(Value(f, "roce_qos_policy_reload_timestamp_seconds", {}), 1700000200);
  EXPECT_DOUBLE_EQ(Value(f, "roce_qos_detection_latency_seconds", {}), 0.004);
  EXPECT_DOUBLE_EQ(Value(f, "roce_qos_detection_latency_max_seconds", {}), 0.02);
  EXPECT_EQ(Value(f, "roce_qos_change_notifications_total", {}), 12);
  EXPECT_EQ(Value(f, "roce_qos_monitor_resyncs_total", {{"reason", "overflow"}}), 2);
  EXPECT_EQ(Value(f, "roce_qos_monitor_resyncs_total", {{"reason", "read_error"}}), 0);
  EXPECT_EQ(Value(f, "roce_qos_monitor_resyncs_total", {{"reason", "malformed"}}), 5);
  EXPECT_EQ(Value(f, "roce_qos_monitor_up", {}), 1);
  EXPECT_EQ(Value(f, "roce_qos_remediation_mode", {{"mode", "enforce"}}), 1);
}

// The fields PlanRemediation may write for `q`: checked, not mtu, not absent on the device.
std::set<std::string> RemediableFields(const QosDeviceState& q) {
  std::set<std::string> out;
  for (const FieldVerdict& v : q.drift.fields)
    if (v.field != QosField::kMtu && v.status != FieldStatus::kAbsent)
      out.emplace(QosFieldName(v.field));
  return out;
}

TEST(RenderQos, RemediationCountersExistAtZeroForEachRemediableFieldAndResultOfTheMode) {
  const Snapshot s = QosSnapshot();
  const std::set<std::string> fields = RemediableFields(*s.devices[0].qos);
  ASSERT_TRUE(fields.count("pfc"));
  ASSERT_FALSE(fields.count("mtu"));
  Families f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_qos_remediations_total"), fields.size() * 4);
  for (const std::string& field : fields) {
    for (const char* result : {"success", "failed", "mismatch", "skipped"}) {
      const std::string_view r = result;
      const double want = field == "pfc" && (r == "success" || r == "mismatch") ? 1 : 0;
      EXPECT_EQ(Value(f, "roce_qos_remediations_total",
                      {{"netdev", "sim0"}, {"field", field}, {"result", result}}),
                want)
          << field << " " << result;
    }
  }
  EXPECT_TRUE(std::isnan(Value(f, "roce_qos_remediations_total",
                               {{"netdev", "sim0"}, {"field", "mtu"}, {"result", "success"}})))
      << "mtu is never remediated";
  EXPECT_TRUE(std::isnan(Value(f, "roce_qos_remediations_total",
                               {{"netdev", "sim0"}, {"field", "pfc"}, {"result", "dry_run"}})))
      << "enforce never counts dry_run";

  // Dry-run: one result per field.
  Snapshot dry = QosSnapshot();
  auto g = std::make_shared<QosGlobalState>(*dry.qos);
  g->remediation_mode = RemediationMode::kDryRun;
  dry.qos = g;
  auto q = std::make_shared<QosDeviceState>(*dry.devices[0].qos);
  q->remediation = RemediationState::kDryRun;
  q->remediation_counts = {{{QosField::kPfc, "dry_run"}, 4}};
  dry.devices[0].qos = q;
  f = RenderSnapshot(&dry);
  EXPECT_EQ(Count(f, "roce_qos_remediations_total"), fields.size());
  EXPECT_EQ(Value(f, "roce_qos_remediations_total",
                  {{"netdev", "sim0"}, {"field", "pfc"}, {"result", "dry_run"}}),
            4);
  EXPECT_EQ(Value(f, "roce_qos_remediations_total",
                  {{"netdev", "sim0"}, {"field", "trust"}, {"result", "dry_run"}}),
            0);
}

TEST(RenderQos, InterruptedApplyAndEnforceHeldElsewhere) {
  Snapshot s = QosSnapshot();
  Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_qos_remediation_interrupted_apply", {{"netdev", "sim0"}}), 0);
  EXPECT_EQ(Value(f, "roce_qos_remediation_enforce_held_elsewhere", {}), 0);
  auto q = std::make_shared<QosDeviceState>(*s.devices[0].qos);
  q->interrupted_apply = true;
  s.devices[0].qos = q;
  auto g = std::make_shared<QosGlobalState>(*s.qos);
  g->enforce_held_elsewhere = true;
  g->remediation_mode = RemediationMode::kOff;
  s.qos = g;
  f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_qos_remediation_interrupted_apply", {{"netdev", "sim0"}}), 1);
  EXPECT_EQ(Value(f, "roce_qos_remediation_enforce_held_elsewhere", {}), 1);
}

TEST(RenderQos, ApplyStuckOnlyWithRemediationOn) {
  Snapshot s = QosSnapshot();
  auto g = std::make_shared<QosGlobalState>(*s.qos);
  g->remediation_mode = RemediationMode::kEnforce;
  g->apply_stuck = true;
  g->apply_stuck_total = 2;
  s.qos = g;
  Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_qos_remediation_apply_stuck", {}), 1);
  EXPECT_EQ(Value(f, "roce_qos_remediation_apply_stuck_total", {}), 2);
  g->remediation_mode = RemediationMode::kOff;
  f = RenderSnapshot(&s);
  EXPECT_EQ(Find(f, "roce_qos_remediation_apply_stuck"), nullptr);
}

TEST(RenderQos, OffModeAndNoQosStageMeanNoSeries) {
  Snapshot s = QosSnapshot();
  auto q = std::make_shared<QosDeviceState>(*s.devices[0].qos);
  q->remediation.reset();
  s.devices[0].qos = q;
  Families f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_qos_remediation_state"), 0u);
  EXPECT_EQ(Count(f, "roce_qos_remediations_total"), 0u);
  EXPECT_EQ(Count(f, "roce_qos_remediation_given_up"), 0u);

  Snapshot bare;
  DeviceSnapshot d;
  auto device = std::make_shared<Device>();
  device->name = "ens1f0np0";
  d.device = device;
  bare.devices.push_back(d);
  f = RenderSnapshot(&bare);
  for (const auto& family : f) EXPECT_NE(family.name.rfind("roce_qos_", 0), 0u) << family.name;
}

// A port that is not a RoCE port (docs/policy.md "RoCE ports"): its differences from the
// defaults are no drift series, and the reason is exported instead.
TEST(RenderQos, AnUnconfiguredPortHasNoVerdictSeries) {
  Snapshot s = QosSnapshot();
  Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_qos_port_unconfigured", {{"netdev", "sim0"}, {"reason", "configured"}}),
            0);
  EXPECT_EQ(Value(f, "roce_qos_drift", {{"netdev", "sim0"}, {"field", "pfc"}}), 1);

  auto q = std::make_shared<QosDeviceState>(*s.devices[0].qos);
  q->roce_port = RocePortClass{false, RocePortReason::kNoRoceTraffic, "at factory defaults"};
  s.devices[0].qos = q;
  f = RenderSnapshot(&s);
  EXPECT_EQ(
      Value(f, "roce_qos_port_unconfigured", {{"netdev", "sim0"}, {"reason", "no_roce_traffic"}}),
      1);
  EXPECT_EQ(Count(f, "roce_qos_port_unconfigured"), 1u);
  for (const char* family : {"roce_qos_drift", "roce_qos_in_sync", "roce_qos_observed_absent",
                             "roce_qos_observed_unreadable", "roce_qos_dcqcn_param_drift"})
    EXPECT_EQ(Count(f, family), 0u) << family;
  EXPECT_EQ(Count(f, "roce_qos_policy_info"), 1u) << "the rest of the device stays";
  EXPECT_EQ(Count(f, "roce_qos_pfc_enabled"), 8u);

  q->roce_port.reset();  // policy rule none: nothing classified
  f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_qos_port_unconfigured"), 0u);
}

TEST(RenderQos, EverySampleMatchesItsTableEntryAndSerializes) {
  Snapshot s = QosSnapshot();
  Families f = RenderSnapshot(&s);
  std::set<std::string> qos_families;
  for (const auto& family : f) {
    if (family.name.rfind("roce_qos_", 0) != 0) continue;
    qos_families.insert(family.name);
    const MetricDef* def = nullptr;
    for (const MetricDef& d : AllMetrics())
      if (d.name == family.name) def = &d;
    ASSERT_NE(def, nullptr) << family.name;
    for (const auto& m : family.metric) {
      ASSERT_EQ(m.label.size(), def->label_count()) << family.name;
      for (size_t i = 0; i < m.label.size(); ++i) EXPECT_EQ(m.label[i].name, def->labels[i]);
    }
  }
  // Every QoS family of the table is rendered by this snapshot (none forgotten).
  for (const MetricDef& d : AllMetrics())
    if (d.area == "qos") {
      EXPECT_TRUE(qos_families.count(std::string(d.name))) << d.name;
    }
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, f);
  EXPECT_NE(text.str().find("roce_qos_drift{netdev=\"sim0\",field=\"pfc\"} 1"), std::string::npos);
}

TEST(RenderQos, DirectTextIsTheSerializersText) {
  const Snapshot s = QosSnapshot();
  EXPECT_EQ(testing::DirectText(&s), testing::SerializedText(&s));
}

}  // namespace
}  // namespace roceqos
