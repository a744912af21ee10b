// QoS state, drift, policy and remediation families (docs/policy.md).

#include <linux/dcbnl.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "exporter/core/qos_state.h"
#include "exporter/qos/remediate.h"
#include "exporter/qos/roce_port.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

double UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// Every family of the area, built together so each appends only when it has samples.
struct QosFamilies {
  FamilyBuilder trust{FindMetric("roce_qos_trust")};
  FamilyBuilder pfc{FindMetric("roce_qos_pfc_enabled")};
  FamilyBuilder cable{FindMetric("roce_qos_pfc_cable_length_meters")};
  FamilyBuilder prio_tc{FindMetric("roce_qos_prio_tc")};
  FamilyBuilder ets_bw{FindMetric("roce_qos_ets_bandwidth_ratio")};
  FamilyBuilder ets_tsa{FindMetric("roce_qos_ets_tsa")};
  FamilyBuilder dscp{FindMetric("roce_qos_dscp_prio")};
  FamilyBuilder prio_buffer{FindMetric("roce_qos_prio_buffer")};
  FamilyBuilder buffer_size{FindMetric("roce_qos_buffer_size_bytes")};
  FamilyBuilder buffer_total{FindMetric("roce_qos_buffer_total_bytes")};
  FamilyBuilder maxrate{FindMetric("roce_qos_maxrate_bytes_per_second")};
  FamilyBuilder dcbx{FindMetric("roce_qos_dcbx_mode")};
  FamilyBuilder tos{FindMetric("roce_qos_roce_tos")};
  FamilyBuilder dcqcn{FindMetric("roce_qos_dcqcn_enabled")};
  FamilyBuilder cnp_dscp{FindMetric("roce_qos_cnp_dscp")};
  FamilyBuilder cnp_prio{FindMetric("roce_qos_cnp_prio")};
  FamilyBuilder tcp_ecn{FindMetric("roce_qos_tcp_ecn")};
  FamilyBuilder dcqcn_param{FindMetric("roce_qos_dcqcn_param")};
  FamilyBuilder dcqcn_param_drift{FindMetric("roce_qos_dcqcn_param_drift")};
  FamilyBuilder storm_timeout{FindMetric("roce_qos_pfc_storm_prevention_timeout_seconds")};
  FamilyBuilder drift{FindMetric("roce_qos_drift")};
  FamilyBuilder absent{FindMetric("roce_qos_observed_absent")};
  FamilyBuilder unreadable{FindMetric("roce_qos_observed_unreadable")};
  FamilyBuilder in_sync{FindMetric("roce_qos_in_sync")};
  FamilyBuilder unconfigured{FindMetric("roce_qos_port_unconfigured")};
  FamilyBuilder drift_events{FindMetric("roce_qos_drift_events_total")};
  FamilyBuilder last_change{FindMetric("roce_qos_last_change_timestamp_seconds")};
  FamilyBuilder policy_info{FindMetric("roce_qos_policy_info")};
  FamilyBuilder state_info{FindMetric("roce_qos_state_info")};
  FamilyBuilder reload_success{FindMetric("roce_qos_policy_reload_success")};
  FamilyBuilder reload_time{FindMetric("roce_qos_policy_reload_timestamp_seconds")};
  FamilyBuilder latency{FindMetric("roce_qos_detection_latency_seconds")};
  FamilyBuilder latency_max{FindMetric("roce_qos_detection_latency_max_seconds")};
  FamilyBuilder notifications{FindMetric("roce_qos_change_notifications_total")};
  FamilyBuilder resyncs{FindMetric("roce_qos_monitor_resyncs_total")};
  FamilyBuilder monitor_up{FindMetric("roce_qos_monitor_up")};
  FamilyBuilder mode{FindMetric("roce_qos_remediation_mode")};
  FamilyBuilder remediation_state{FindMetric("roce_qos_remediation_state")};
  FamilyBuilder given_up{FindMetric("roce_qos_remediation_given_up")};
  FamilyBuilder remediations{FindMetric("roce_qos_remediations_total")};
  FamilyBuilder interrupted{FindMetric("roce_qos_remediation_interrupted_apply")};
  FamilyBuilder held_elsewhere{FindMetric("roce_qos_remediation_enforce_held_elsewhere")};
  FamilyBuilder suspended{FindMetric("roce_qos_remediation_enforce_suspended")};
  FamilyBuilder apply_stuck{FindMetric("roce_qos_remediation_apply_stuck")};
  FamilyBuilder apply_stuck_total{FindMetric("roce_qos_remediation_apply_stuck_total")};

  void AppendTo(MetricSink& out) {
    for (FamilyBuilder* f : {&trust,
                             &pfc,
                             &cable,
                             &prio_tc,
                             &ets_bw,
                             &ets_tsa,
                             &dscp,
                             &prio_buffer,
                             &buffer_size,
                             &buffer_total,
                             &maxrate,
                             &dcbx,
                             &tos,
                             &dcqcn,
                             &cnp_dscp,
                             &cnp_prio,
                             &tcp_ecn,
                             &dcqcn_param,
                             &dcqcn_param_drift,
                             &storm_timeout,
                             &drift,
                             &absent,
                             &unreadable,
                             &in_sync,
                             &unconfigured,
                             &drift_events,
                             &last_change,
                             &policy_info,
                             &state_info,
                             &reload_success,
                             &reload_time,
                             &latency,
                             &latency_max,
                             &notifications,
                             &resyncs,
                             &monitor_up,
                             &mode,
                             &remediation_state,
                             &given_up,
                             &remediations,
                             &interrupted,
                             &held_elsewhere,
                             &suspended,
                             &apply_stuck,
                             &apply_stuck_total})
      f->AppendTo(out);
  }
};

void RenderDcb(std::string_view netdev, const QosState& s, QosFamilies& f) {
  std::string a, b;
  const TrustMode trust = s.Trust();
  f.trust.Add({netdev, TrustModeName(TrustMode::kDscp)}, trust == TrustMode::kDscp ? 1 : 0);
  f.trust.Add({netdev, TrustModeName(TrustMode::kPcp)}, trust == TrustMode::kPcp ? 1 : 0);
  if (s.pfc) {
    for (int p = 0; p < kNumPriorities; ++p)
      f.pfc.Add({netdev, IndexLabel(p, a)}, s.pfc->Enabled(p));
    f.cable.Add({netdev}, s.pfc->delay);
  }
  if (s.ets) {
    for (int p = 0; p < kNumPriorities; ++p)
      f.prio_tc.Add({netdev, IndexLabel(p, a)}, s.ets->prio_tc[p]);
    for (int tc = 0; tc < kNumTcs; ++tc) {
      f.ets_bw.Add({netdev, IndexLabel(tc, a)}, s.ets->tc_tx_bw[tc] / 100.0);
      f.ets_tsa.Add({netdev, IndexLabel(tc, a), TsaName(s.ets->tc_tsa[tc])}, 1);
    }
  }
  // apps are sorted (selector, priority, protocol): the first entry seen per DSCP is its lowest
  // priority, and one series per DSCP keeps the label set unique.
  bool seen[kNumDscp] = {};
  for (const DcbApp& app : s.apps) {
    if (app.selector != IEEE_8021QAZ_APP_SEL_DSCP || app.protocol >= kNumDscp) continue;
    if (seen[app.protocol]) continue;
    seen[app.protocol] = true;
    b = std::to_string(app.protocol);
    f.dscp.Add({netdev, b}, app.priority);
  }
  if (s.buffer) {
    for (int p = 0; p < kNumPriorities; ++p)
      f.prio_buffer.Add({netdev, IndexLabel(p, a)}, s.buffer->prio_buffer[p]);
    for (int i = 0; i < std::ssize(s.buffer->size); ++i)
      f.buffer_size.Add({netdev, IndexLabel(i, a)}, s.buffer->size[i]);
    f.buffer_total.Add({netdev}, s.buffer->total_size);
  }
  if (s.maxrate_kbps) {
    for (int tc = 0; tc < kNumTcs; ++tc)
      f.maxrate.Add({netdev, IndexLabel(tc, a)},
                    static_cast<double>((*s.maxrate_kbps)[tc]) * 1000.0 / 8.0);
  }
  if (s.dcbx) {
    const std::string_view current = DcbxModeName(*s.dcbx);
    for (std::string_view m : {"host", "firmware", "lld_managed"})
      f.dcbx.Add({netdev, m}, m == current ? 1 : 0);
  }
}

void RenderHost(std::string_view netdev, const ObservedQos& o, QosFamilies& f) {
  std::string a;
  for (int p = 0; p < kNumPriorities; ++p) {
    if (o.dcqcn.np_enabled[p].ok())
      f.dcqcn.Add({netdev, IndexLabel(p, a), "np"}, o.dcqcn.np_enabled[p].value);
    if (o.dcqcn.rp_enabled[p].ok())
      f.dcqcn.Add({netdev, IndexLabel(p, a), "rp"}, o.dcqcn.rp_enabled[p].value);
  }
  if (o.dcqcn.cnp_dscp.ok()) f.cnp_dscp.Add({netdev}, o.dcqcn.cnp_dscp.value);
  if (o.dcqcn.cnp_802p_prio.ok()) f.cnp_prio.Add({netdev}, o.dcqcn.cnp_802p_prio.value);
  if (o.dcqcn_params.ok()) {
    for (const auto& [name, value] : o.dcqcn_params.value.reaction_point)
      f.dcqcn_param.Add({netdev, DcqcnRoleName(DcqcnRole::kReactionPoint), name},
                        static_cast<double>(value));
    for (const auto& [name, value] : o.dcqcn_params.value.notification_point) {
      // CNP marking has its own families (roce_qos_cnp_dscp, roce_qos_cnp_prio).
      if (name == "cnp_dscp" || name == "cnp_802p_prio") continue;
      f.dcqcn_param.Add({netdev, DcqcnRoleName(DcqcnRole::kNotificationPoint), name},
                        static_cast<double>(value));
    }
  }
  for (const PortTos& port : o.roce_tos) {
    Observed<uint8_t> tos = port.tos.Effective();
    if (tos.ok()) f.tos.Add({port.device, std::to_string(port.port)}, tos.value);
  }
  if (o.pfc_storm_timeout_ms.ok()) {
    const uint16_t ms = o.pfc_storm_timeout_ms.value;
    // uapi PFC_STORM_PREVENTION_AUTO = 0xffff (mlx5: 100 ms), PFC_STORM_PREVENTION_DISABLE = 0.
    if (ms == 0xffff)
      f.storm_timeout.Add({netdev, "auto"}, 0.1);
    else if (ms == 0)
      f.storm_timeout.Add({netdev, "disabled"}, 0);
    else
      f.storm_timeout.Add({netdev, "fixed"}, ms / 1000.0);
  }
}

// The results remediation can count in `mode` (exporter/qos/remediate.h kResult*).
std::span<const std::string_view> RemediationResults(RemediationMode mode) {
  static constexpr std::string_view kEnforce[] = {kResultSuccess, kResultFailed, kResultMismatch,
                                                  kResultSkipped};
  static constexpr std::string_view kDryRun[] = {kResultDryRun};
  switch (mode) {
    case RemediationMode::kEnforce:
      return kEnforce;
    case RemediationMode::kDryRun:
      return kDryRun;
    case RemediationMode::kOff:
      break;
  }
  return {};
}

// Counters exist at 0 from the moment their label set is known (docs/metrics.md). A remediation
// label set is known once remediation is on: each field the device's policy checks that
// PlanRemediation can write (never an observe-only field, nothing the device lacks), with each
// result of the mode.
void RenderRemediations(std::string_view netdev, const QosDeviceState& q, RemediationMode mode,
                        QosFamilies& f) {
  std::map<std::pair<std::string_view, std::string_view>, uint64_t> counts;
  for (const FieldVerdict& v : q.drift.fields) {
    if (!Remediable(v.field) || v.status == FieldStatus::kAbsent) continue;
    for (std::string_view result : RemediationResults(mode))
      counts[{QosFieldName(v.field), result}] = 0;
  }
  for (const auto& [key, count] : q.remediation_counts)
    counts[{QosFieldName(key.first), key.second}] = count;
  for (const auto& [key, count] : counts)
    f.remediations.Add({netdev, key.first, key.second}, static_cast<double>(count));
}

// An unconfigured port (not a RoCE port, docs/policy.md "RoCE ports") exports no verdict series:
// its differences from the defaults are not drift, and `check` shows them as such.
void RenderVerdicts(std::string_view netdev, const QosDeviceState& q, QosFamilies& f) {
  if (q.roce_port && !q.drift.fields.empty())
    f.unconfigured.Add({netdev, RocePortReasonName(q.roce_port->reason)},
                       q.roce_port->checked ? 0 : 1);
  if (q.roce_port && !q.roce_port->checked) return;
  for (const FieldVerdict& v : q.drift.fields) {
    const std::string_view field = QosFieldName(v.field);
    if (v.Known()) f.drift.Add({netdev, field}, v.Drifted() ? 1 : 0);
    f.absent.Add({netdev, field}, v.status == FieldStatus::kAbsent ? 1 : 0);
    f.unreadable.Add({netdev, field}, v.status == FieldStatus::kFailed ? 1 : 0);
  }
  // A netdev whose effective policy checks no field (rule "none") is not checked, not in sync:
  // no series, as `check` reports it "not checked" (docs/check.md).
  if (!q.drift.fields.empty()) f.in_sync.Add({netdev}, q.drift.InSync() ? 1 : 0);
  for (const DcqcnParamVerdict& p : q.drift.dcqcn_params)
    if (p.status == FieldStatus::kInSync || p.status == FieldStatus::kDrift)
      f.dcqcn_param_drift.Add({netdev, DcqcnRoleName(p.role), p.name},
                              p.status == FieldStatus::kDrift ? 1 : 0);
}

void RenderDrift(std::string_view netdev, const QosDeviceState& q, RemediationMode mode,
                 QosFamilies& f) {
  RenderVerdicts(netdev, q, f);
  for (const auto& [field, count] : q.drift_events)
    f.drift_events.Add({netdev, QosFieldName(field)}, static_cast<double>(count));
  f.last_change.Add({netdev}, UnixSeconds(q.last_change));
  f.policy_info.Add({netdev, q.policy_rule, q.policy_hash}, 1);
  f.state_info.Add({netdev, q.state_hash}, 1);
  if (q.remediation) {
    for (RemediationState s : kAllRemediationStates)
      f.remediation_state.Add({netdev, RemediationStateName(s)}, s == *q.remediation ? 1 : 0);
    f.given_up.Add({netdev}, *q.remediation == RemediationState::kGaveUp ? 1 : 0);
    f.interrupted.Add({netdev}, q.interrupted_apply ? 1 : 0);
    RenderRemediations(netdev, q, mode, f);
  }
}

}  // namespace

void RenderQos(const Snapshot& snapshot, MetricSink& out) {
  QosFamilies f;
  const RemediationMode mode =
      snapshot.qos ? snapshot.qos->remediation_mode : RemediationMode::kOff;
  for (const DeviceSnapshot& snap : snapshot.devices) {
    if (!snap.device || !snap.qos) continue;
    const std::string_view netdev = snap.device->name;
    const QosDeviceState& q = *snap.qos;
    if (q.observed.dcb.ok()) RenderDcb(netdev, q.observed.dcb.value, f);
    RenderHost(netdev, q.observed, f);
    RenderDrift(netdev, q, mode, f);
  }
  if (const QosGlobalState* g = snapshot.qos.get()) {
    if (g->tcp_ecn.ok()) f.tcp_ecn.Add({}, g->tcp_ecn.value);
    f.reload_success.Add({}, g->policy_reload_success ? 1 : 0);
    f.reload_time.Add({}, UnixSeconds(g->policy_reload_time));
    if (g->last_detection_latency_seconds) {
      f.latency.Add({}, *g->last_detection_latency_seconds);
      f.latency_max.Add({}, g->max_detection_latency_seconds);
    }
    f.notifications.Add({}, static_cast<double>(g->change_notifications));
    for (const auto& [reason, name] : kResyncReasonNames) {
      f.resyncs.Add({name},
                    static_cast<double>(g->monitor_resyncs.at(static_cast<size_t>(reason))));
    }
    f.monitor_up.Add({}, g->monitor_running ? 1 : 0);
    for (RemediationMode m : kAllRemediationModes)
      f.mode.Add({RemediationModeName(m)}, m == g->remediation_mode ? 1 : 0);
    f.held_elsewhere.Add({}, g->enforce_held_elsewhere ? 1 : 0);
    if (g->remediation_mode == RemediationMode::kEnforce)
      for (std::string_view reason : kEnforceSuspendedReasons)
        f.suspended.Add({reason}, g->enforce_suspended_reason == reason ? 1 : 0);
    if (g->remediation_mode != RemediationMode::kOff) {
      f.apply_stuck.Add({}, g->apply_stuck ? 1 : 0);
      f.apply_stuck_total.Add({}, static_cast<double>(g->apply_stuck_total));
    }
  }
  f.AppendTo(out);
}

}  // namespace roceqos
