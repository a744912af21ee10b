// Derived signals (derive.h, storm.h): windowed peaks and ratios, ECN silence, storm state.
// Definitions: docs/signals.md.

#include <algorithm>
#include <string>
#include <vector>

#include "collectors/ethtool_map.h"
#include "exporter/core/derived_signals.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

struct DerivedFamilies {
  FamilyBuilder rate_peak{FindMetric("roce_pfc_pause_rate_peak")};
  FamilyBuilder paused_ratio{FindMetric("roce_pfc_paused_ratio")};
  FamilyBuilder pauses_per_ecn{FindMetric("roce_pfc_pauses_per_ecn_event")};
  FamilyBuilder ecn_silent{FindMetric("roce_ecn_silent")};
  FamilyBuilder cnp_to_ecn{FindMetric("roce_cnp_to_ecn_ratio")};
  FamilyBuilder storm{FindMetric("roce_pfc_storm")};
  FamilyBuilder storm_role{FindMetric("roce_pfc_storm_role")};
  FamilyBuilder storms_total{FindMetric("roce_pfc_storms_total")};
  FamilyBuilder storm_duration{FindMetric("roce_pfc_storm_last_duration_seconds")};
  FamilyBuilder discarded{FindMetric("roce_derived_intervals_discarded_total")};

  void AppendTo(MetricSink& out) {
    for (FamilyBuilder* f : {&rate_peak, &paused_ratio, &pauses_per_ecn, &ecn_silent, &cnp_to_ecn,
                             &storm, &storm_role, &storms_total, &storm_duration, &discarded}) {
      f->AppendTo(out);
    }
  }
};

// One netdev's signals and the labels every family of it shares.
struct DerivedDevice {
  const DeviceSignals& signals;
  const std::vector<std::string>& windows;
  std::string_view netdev;

  size_t WindowCount() const { return std::min(windows.size(), kMaxWindows); }
};

void AddPauses(const DerivedDevice& d, DerivedFamilies& f, std::string& index_storage) {
  for (const PauseSignals& pause : d.signals.pause) {
    const std::string_view prio = IndexLabel(pause.prio, index_storage);
    const std::string_view direction = DirectionName(pause.direction);
    for (size_t w = 0; w < d.WindowCount(); ++w) {
      f.rate_peak.Add({d.netdev, prio, direction, d.windows[w]}, pause.rate_peak[w]);
      f.paused_ratio.Add({d.netdev, prio, direction, d.windows[w]}, pause.paused_ratio_peak[w]);
    }
  }
}

void AddEcn(const DerivedDevice& d, DerivedFamilies& f) {
  const std::string rdma_port = std::to_string(d.signals.rdma_port);
  for (size_t w = 0; w < d.WindowCount(); ++w) {
    const EcnWindowSignals& ecn = d.signals.ecn[w];
    // Unknown ECN is not silence: without the RDMA counters there is no series at all.
    for (const auto& [role, role_name] : kEcnRoleNames) {
      const RoleEcnSignals& r = ecn.Role(role);
      if (!r.known) continue;
      f.pauses_per_ecn.Add({d.netdev, d.windows[w], role_name}, r.pauses_per_ecn);
      f.ecn_silent.Add({d.netdev, d.windows[w], role_name}, r.ecn_silent ? 1 : 0);
    }
    if (ecn.cnp_known && !d.signals.rdma_device.empty()) {
      f.cnp_to_ecn.Add({d.signals.rdma_device, rdma_port, d.windows[w]}, ecn.cnp_to_ecn_ratio);
    }
  }
}

void AddStorms(const DerivedDevice& d, DerivedFamilies& f, std::string& index_storage) {
  for (const StormSignals& s : d.signals.storms) {
    const std::string_view prio = IndexLabel(s.prio, index_storage);
    const std::string_view direction = DirectionName(s.direction);
    f.storm.Add({d.netdev, prio, direction}, s.stormed ? 1 : 0);
    f.storms_total.Add({d.netdev, prio, direction}, static_cast<double>(s.episodes));
    f.storm_duration.Add({d.netdev, prio, direction}, s.last_episode_seconds);
  }
  for (const PrioStormRole& r : d.signals.storm_roles) {
    const std::string_view prio = IndexLabel(r.prio, index_storage);
    for (StormRole role : {StormRole::kOrigin, StormRole::kVictim}) {
      f.storm_role.Add({d.netdev, prio, NameOf(kStormRoleNames, role)}, r.role == role ? 1 : 0);
    }
  }
  for (const auto& [reason, name] : kDiscardReasonNames) {
    f.discarded.Add(
        {d.netdev, name},
        static_cast<double>(d.signals.discarded_intervals[static_cast<size_t>(reason)]));
  }
}

}  // namespace

void RenderDerived(const Snapshot& snapshot, MetricSink& out) {
  DerivedFamilies families;
  std::string index_storage;
  for (const DeviceSnapshot& device : snapshot.devices) {
    if (!device.derived || !device.device || !device.derived->window_labels) continue;
    const DerivedDevice d{device.derived->signals, *device.derived->window_labels,
                          device.device->name};
    AddPauses(d, families, index_storage);
    AddEcn(d, families);
    AddStorms(d, families, index_storage);
  }
  families.AppendTo(out);
}

}  // namespace roceqos
