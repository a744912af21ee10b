// LLDP: the switch port each selected netdev is cabled to, what it advertises, and the NIC
// against it (DeviceSnapshot::switch_comparison, computed by exporter/qos/switch_compare.h). Only
// netdevs of the rendered snapshot are shown, so a device that left the selection has no series
// even while the poller's state still lists it.

#include <algorithm>
#include <string>

#include "collectors/dcb.h"
#include "exporter/core/lldp_state.h"
#include "exporter/core/qos_state.h"
#include "exporter/core/switch_comparison.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

struct LldpFamilies {
  FamilyBuilder present{FindMetric("roce_lldp_neighbor_present")};
  FamilyBuilder absent_reason{FindMetric("roce_lldp_neighbor_absent_reason")};
  FamilyBuilder neighbors{FindMetric("roce_lldp_neighbors")};
  FamilyBuilder port_errors{FindMetric("roce_lldp_port_errors_total")};
  FamilyBuilder info{FindMetric("roce_lldp_neighbor_info")};
  FamilyBuilder age{FindMetric("roce_lldp_neighbor_age_seconds")};
  FamilyBuilder ttl{FindMetric("roce_lldp_neighbor_ttl_seconds")};
  FamilyBuilder frames{FindMetric("roce_lldp_frames_received_total")};
  FamilyBuilder pfc_enabled{FindMetric("roce_lldp_switch_pfc_enabled")};
  FamilyBuilder pfc_willing{FindMetric("roce_lldp_switch_pfc_willing")};
  FamilyBuilder pfc_cap{FindMetric("roce_lldp_switch_pfc_capability")};
  FamilyBuilder dscp_prio{FindMetric("roce_lldp_switch_dscp_prio")};
  FamilyBuilder prio_tc{FindMetric("roce_lldp_switch_prio_tc")};
  FamilyBuilder ets_bandwidth{FindMetric("roce_lldp_switch_ets_bandwidth_ratio")};
  FamilyBuilder ets_tsa{FindMetric("roce_lldp_switch_ets_tsa")};
  FamilyBuilder max_frame{FindMetric("roce_lldp_switch_max_frame_size_bytes")};
  FamilyBuilder mismatch{FindMetric("roce_qos_switch_mismatch")};
  FamilyBuilder frame_overhead{FindMetric("roce_qos_switch_frame_overhead_bytes")};

  void AppendTo(MetricSink& out) {
    for (FamilyBuilder* family :
         {&present, &absent_reason, &neighbors, &port_errors, &info, &age, &ttl, &frames,
          &pfc_enabled, &pfc_willing, &pfc_cap, &dscp_prio, &prio_tc, &ets_bandwidth, &ets_tsa,
          &max_frame, &mismatch, &frame_overhead})
      family->AppendTo(out);
  }
};

void AddPfc(LldpFamilies& f, std::string_view netdev, const lldp::PfcConfiguration& pfc) {
  std::string storage;
  for (int prio = 0; prio < kNumPriorities; ++prio)
    f.pfc_enabled.Add({netdev, IndexLabel(prio, storage)}, pfc.Enabled(prio) ? 1 : 0);
  f.pfc_willing.Add({netdev}, pfc.willing ? 1 : 0);
  f.pfc_cap.Add({netdev}, pfc.cap);
}

void AddEts(LldpFamilies& f, std::string_view netdev, const lldp::EtsConfiguration& ets) {
  std::string storage;
  for (int prio = 0; prio < kNumPriorities; ++prio)
    f.prio_tc.Add({netdev, IndexLabel(prio, storage)}, ets.tables.prio_tc[prio]);
  for (int tc = 0; tc < kNumTcs; ++tc) {
    f.ets_bandwidth.Add({netdev, IndexLabel(tc, storage)}, ets.tables.tc_bandwidth[tc] / 100.0);
    f.ets_tsa.Add({netdev, IndexLabel(tc, storage), TsaName(ets.tables.tc_tsa[tc])}, 1);
  }
}

void AddDscp(LldpFamilies& f, std::string_view netdev, const lldp::ApplicationPriority& app) {
  for (const auto& [dscp, prio] : LowestDscpPriorities(app.entries))
    f.dscp_prio.Add({netdev, std::to_string(dscp)}, prio);
}

void AddNeighbor(LldpFamilies& f, std::string_view netdev, const lldp::Neighbor& n,
                 int64_t read_at_unix) {
  f.info.Add(
      {netdev, n.chassis_id, n.system_name, n.port_id, n.port_description, n.management_address},
      1);
  f.age.Add({netdev}, static_cast<double>(std::max<int64_t>(0, read_at_unix - n.changed_at_unix)));
  f.ttl.Add({netdev}, n.ttl_seconds);
  if (n.dcbx.pfc_configuration) AddPfc(f, netdev, *n.dcbx.pfc_configuration);
  if (n.dcbx.ets_configuration) AddEts(f, netdev, *n.dcbx.ets_configuration);
  if (n.dcbx.application_priority) AddDscp(f, netdev, *n.dcbx.application_priority);
  if (n.max_frame_size) f.max_frame.Add({netdev}, *n.max_frame_size);
}

void AddMismatch(LldpFamilies& f, std::string_view netdev, const SwitchComparison& compared) {
  for (const SwitchFieldComparison& field : compared.fields)
    f.mismatch.Add({netdev, field.field}, field.drift ? 1 : 0);
  if (compared.frame)
    f.frame_overhead.Add({netdev, compared.frame->tagging}, compared.frame->bytes);
}

void AddPort(LldpFamilies& f, const LldpState& state, std::string_view netdev) {
  if (auto errors = state.port_errors.find(netdev); errors != state.port_errors.end())
    for (const auto& [reason, count] : errors->second)
      f.port_errors.Add({netdev, reason}, static_cast<double>(count));
  if (!state.view) return;
  auto port = state.view->ports.find(std::string(netdev));
  if (port == state.view->ports.end() || !port->second.error.empty()) return;  // unknown, not 0
  f.frames.Add({netdev}, static_cast<double>(port->second.frames_received));
  f.neighbors.Add({netdev}, static_cast<double>(port->second.neighbors.size()));
}

void AddDevice(LldpFamilies& f, const LldpState& state, const DeviceSnapshot& snap) {
  const std::string& netdev = snap.device->name;
  AddPort(f, state, netdev);
  const lldp::Neighbor* neighbor = FindLldpNeighbor(state, netdev);
  f.present.Add({netdev}, neighbor != nullptr ? 1 : 0);
  if (neighbor == nullptr) {
    const auto absence =
        LldpNeighborAbsence(state, netdev, snap.device->oper_state == OperState::kUp);
    if (absence) f.absent_reason.Add({netdev, LldpAbsenceName(*absence)}, 1);
    return;
  }
  AddNeighbor(f, netdev, *neighbor, state.read_at_unix);
  if (snap.switch_comparison) AddMismatch(f, netdev, *snap.switch_comparison);
}

void AddSelf(const LldpState& state, MetricSink& out) {
  FamilyBuilder interval(FindMetric("roce_exporter_lldp_interval_seconds"));
  interval.Add({}, state.interval_seconds);
  interval.AppendTo(out);
  FamilyBuilder queries(FindMetric("roce_exporter_lldp_queries_total"));
  queries.Add({}, static_cast<double>(state.queries));
  queries.AppendTo(out);
  FamilyBuilder errors(FindMetric("roce_exporter_lldp_query_errors_total"));
  for (const auto& [reason, count] : state.errors) errors.Add({reason}, static_cast<double>(count));
  errors.AppendTo(out);
  if (!state.library.empty()) {
    FamilyBuilder library(FindMetric("roce_exporter_lldp_library_info"));
    library.Add({state.library}, 1);
    library.AppendTo(out);
  }
}

}  // namespace

void RenderLldp(const Snapshot& snapshot, MetricSink& out) {
  if (!snapshot.lldp) return;  // --lldp.interval=0, or no round finished yet
  LldpFamilies f;
  for (const DeviceSnapshot& snap : snapshot.devices)
    if (snap.device) AddDevice(f, *snapshot.lldp, snap);
  f.AppendTo(out);
  AddSelf(*snapshot.lldp, out);
}

}  // namespace roceqos
