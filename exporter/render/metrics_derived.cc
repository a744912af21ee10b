// Derived signals (derive.h, storm.h): windowed peaks and ratios, ECN silence, storm state.
// Definitions: docs/signals.md.

#include <string>

#include "collectors/ethtool_map.h"
#include "exporter/core/derived_signals.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {

void RenderDerived(const Snapshot& snapshot, MetricSink& out) {
  FamilyBuilder rate_peak(FindMetric("roce_pfc_pause_rate_peak"));
  FamilyBuilder paused_ratio(FindMetric("roce_pfc_paused_ratio"));
  FamilyBuilder pauses_per_ecn(FindMetric("roce_pfc_pauses_per_ecn_event"));
  FamilyBuilder ecn_silent(FindMetric("roce_ecn_silent"));
  FamilyBuilder cnp_to_ecn(FindMetric("roce_cnp_to_ecn_ratio"));
  FamilyBuilder storm(FindMetric("roce_pfc_storm"));
  FamilyBuilder storm_role(FindMetric("roce_pfc_storm_role"));
  FamilyBuilder storms_total(FindMetric("roce_pfc_storms_total"));
  FamilyBuilder storm_duration(FindMetric("roce_pfc_storm_last_duration_seconds"));
  FamilyBuilder discarded(FindMetric("roce_derived_intervals_discarded_total"));

  std::string index_storage;
  for (const DeviceSnapshot& device : snapshot.devices) {
    if (!device.derived || !device.device || !device.derived->window_labels) continue;
    const DeviceSignals& signals = device.derived->signals;
    const std::vector<std::string>& windows = *device.derived->window_labels;
    const std::string_view netdev = device.device->name;

    for (const PauseSignals& pause : signals.pause) {
      const std::string_view prio = IndexLabel(pause.prio, index_storage);
      const std::string_view direction = DirectionName(pause.direction);
      for (size_t w = 0; w < windows.size() && w < kMaxWindows; ++w) {
        rate_peak.Add({netdev, prio, direction, windows[w]}, pause.rate_peak[w]);
        paused_ratio.Add({netdev, prio, direction, windows[w]}, pause.paused_ratio_peak[w]);
      }
    }
    const std::string rdma_port = std::to_string(signals.rdma_port);
    for (size_t w = 0; w < windows.size() && w < kMaxWindows; ++w) {
      const EcnWindowSignals& ecn = signals.ecn[w];
      // Unknown ECN is not silence: without the RDMA counters there is no series at all.
      for (const auto& [role, role_name] : kEcnRoleNames) {
        const RoleEcnSignals& r = ecn.Role(role);
        if (!r.known) continue;
        pauses_per_ecn.Add({netdev, windows[w], role_name}, r.pauses_per_ecn);
        ecn_silent.Add({netdev, windows[w], role_name}, r.ecn_silent ? 1 : 0);
      }
      if (ecn.cnp_known && !signals.rdma_device.empty()) {
        cnp_to_ecn.Add({signals.rdma_device, rdma_port, windows[w]}, ecn.cnp_to_ecn_ratio);
      }
    }
    for (const StormSignals& s : signals.storms) {
      const std::string_view prio = IndexLabel(s.prio, index_storage);
      const std::string_view direction = DirectionName(s.direction);
      storm.Add({netdev, prio, direction}, s.stormed ? 1 : 0);
      storms_total.Add({netdev, prio, direction}, static_cast<double>(s.episodes));
      storm_duration.Add({netdev, prio, direction}, s.last_episode_seconds);
    }
    for (const PrioStormRole& r : signals.storm_roles) {
      const std::string_view prio = IndexLabel(r.prio, index_storage);
      for (StormRole role : {StormRole::kOrigin, StormRole::kVictim}) {
        storm_role.Add({netdev, prio, NameOf(kStormRoleNames, role)}, r.role == role ? 1 : 0);
      }
    }
    for (const auto& [reason, name] : kDiscardReasonNames) {
      discarded.Add({netdev, name},
                    static_cast<double>(signals.discarded_intervals[static_cast<size_t>(reason)]));
    }
  }
  for (FamilyBuilder* f : {&rate_peak, &paused_ratio, &pauses_per_ecn, &ecn_silent, &cnp_to_ecn,
                           &storm, &storm_role, &storms_total, &storm_duration, &discarded}) {
    f->AppendTo(out);
  }
}

}  // namespace roceqos
