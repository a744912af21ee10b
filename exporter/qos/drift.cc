#include "exporter/qos/drift.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>

#include <algorithm>

#include "base/enum_names.h"
#include "base/log_event.h"
#include "exporter/qos/drift_checks.h"
#include "exporter/qos/qos_fields.h"

namespace roceqos {
namespace {

constexpr EnumName<FieldStatus> kFieldStatusNames[] = {
    {FieldStatus::kInSync, "in_sync"},
    {FieldStatus::kDrift, "drift"},
    {FieldStatus::kAbsent, "absent"},
    {FieldStatus::kFailed, "failed"},
};

}  // namespace

std::string_view QosFieldName(QosField field) { return FieldSpec(field).name; }

std::string_view FieldStatusName(FieldStatus status) { return NameOf(kFieldStatusNames, status); }

// Every field the policy checks, in table order (the order `check` and the metrics list them).
DeviceDrift EvaluateDrift(const QosPolicy& policy, const ObservedQos& observed) {
  DeviceDrift drift;
  for (const QosFieldSpec& spec : QosFieldTable())
    if (spec.checked(policy))
      drift.fields.push_back(spec.compare(policy, observed, &drift.dcqcn_params));
  return drift;
}

std::string StateFingerprint(const ObservedQos& o) {
  std::string canonical;
  auto add = [&](std::string_view key, const std::string& value) {
    canonical += fmt::format("{}={};", key, value);
  };
  if (o.dcb.ok()) {
    const QosState& s = o.dcb.value;
    add("trust", std::string(TrustModeName(s.Trust())));
    if (s.pfc) add("pfc", fmt::format("{}/{}", s.pfc->enabled_mask, s.pfc->delay));
    if (s.ets)
      add("ets", drift_check::EtsText(s.ets->tc_tsa, s.ets->tc_tx_bw) + ArrayText(s.ets->prio_tc));
    if (s.buffer) add("buffer", ArrayText(s.buffer->prio_buffer) + ArrayText(s.buffer->size));
    if (s.maxrate_kbps) add("maxrate", ArrayText(*s.maxrate_kbps));
    std::string apps;
    for (const auto& a : s.apps)
      apps += fmt::format("{}:{}:{},", a.selector, a.protocol, a.priority);
    add("apps", apps);
    if (s.dcbx) add("dcbx", std::to_string(*s.dcbx));
  } else {
    add("dcb", o.dcb.absent() ? "absent" : "failed");
  }
  auto obs = [](const auto& x) {
    return x.ok() ? fmt::format("{}", x.value) : std::string(x.absent() ? "-" : "?");
  };
  std::string dcqcn;
  for (int p = 0; p < kNumPriorities; ++p)
    dcqcn += obs(o.dcqcn.np_enabled[p]) + obs(o.dcqcn.rp_enabled[p]);
  add("dcqcn", dcqcn);
  add("cnp", obs(o.dcqcn.cnp_dscp) + "/" + obs(o.dcqcn.cnp_802p_prio));
  for (const auto& port : o.roce_tos)
    add("tos:" + port.device + "/" + std::to_string(port.port), obs(port.tos.Effective()));
  add("tcp_ecn", obs(o.tcp_ecn));
  add("mtu", obs(o.mtu));
  add("link", obs(o.link.speed_mbps) + "/" + obs(o.link.sriov_numvfs));
  add("storm", obs(o.pfc_storm_timeout_ms));
  if (o.dcqcn_params.ok()) {
    std::string params;
    for (const auto& [name, value] : o.dcqcn_params.value.reaction_point)
      params += fmt::format("rp/{}={},", name, value);
    for (const auto& [name, value] : o.dcqcn_params.value.notification_point)
      params += fmt::format("np/{}={},", name, value);
    add("dcqcn_params", params);
  }
  return Fnv1a64Hex(canonical);
}

const DriftTracker::DeviceHistory& DriftTracker::Record(const std::string& netdev,
                                                        const DeviceDrift& drift,
                                                        const std::string& state_fingerprint,
                                                        std::chrono::system_clock::time_point now) {
  DeviceHistory& h = devices_[netdev];
  for (const auto& v : drift.fields) {
    if (!v.Known()) continue;  // unreadable or unverifiable: keep the last known state
    bool drifted = v.Drifted();
    auto [it, first] = h.drifted.try_emplace(v.field, false);
    if (drifted && (first || !it->second)) ++h.drift_events[v.field];
    h.drift_events.try_emplace(v.field, 0);
    FieldLogState& log = h.log[v.field];
    if (!first && it->second != drifted) ++log.unlogged_transitions;
    it->second = drifted;
    LogDriftChange(netdev, v, now, log);
  }
  if (h.state_fingerprint != state_fingerprint) {
    h.state_fingerprint = state_fingerprint;
    h.last_change = now;
  }
  return h;
}

void DriftTracker::LogDriftChange(const std::string& netdev, const FieldVerdict& verdict,
                                  std::chrono::system_clock::time_point now, FieldLogState& log) {
  const bool drifted = verdict.Drifted();
  if (drifted == log.drifted) return;  // the log already says so (a flap is counted, not lost)
  if (log.at != std::chrono::system_clock::time_point{} && now - log.at < kLogInterval) return;
  // The transition that brought the field here is part of this line, not an unlogged one.
  const uint64_t unlogged = log.unlogged_transitions > 0 ? log.unlogged_transitions - 1 : 0;
  if (drifted) {
    // `why` says what the difference does to RoCE, as `check` does.
    LogEvent(spdlog::level::warn, "qos field drift started",
             {{"netdev", netdev},
              {"field", QosFieldName(verdict.field)},
              {"expected", verdict.expected},
              {"actual", verdict.actual},
              {"why", verdict.impact},
              {"unlogged_transitions", unlogged}});
  } else {
    LogEvent(spdlog::level::info, "qos field drift ended",
             {{"netdev", netdev},
              {"field", QosFieldName(verdict.field)},
              {"expected", verdict.expected},
              {"actual", verdict.actual},
              {"unlogged_transitions", unlogged}});
  }
  log = {drifted, now, 0};
}

void DriftTracker::Retain(const std::vector<std::string>& present) {
  for (auto it = devices_.begin(); it != devices_.end();) {
    if (std::find(present.begin(), present.end(), it->first) == present.end())
      it = devices_.erase(it);
    else
      ++it;
  }
}

const DriftTracker::DeviceHistory* DriftTracker::Find(const std::string& netdev) const {
  auto it = devices_.find(netdev);
  return it == devices_.end() ? nullptr : &it->second;
}

}  // namespace roceqos
