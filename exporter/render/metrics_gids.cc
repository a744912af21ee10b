// The RoCE v2 GID check (exporter/sampling/gid_stage.h), attached to the snapshot. Only netdevs
// of the rendered snapshot are shown, so a device that left the selection has no series even
// while the stage's last round still lists it. A missing-address count is a series only while it
// is above 0: three reasons by two families at 0 on every port would be six series per port that
// say nothing the checked count does not (the alert reads "> 0").

#include <string>
#include <string_view>

#include "exporter/core/gid_state.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

struct GidFamilies {
  FamilyBuilder gids{FindMetric("roce_rdma_gids")};
  FamilyBuilder checked{FindMetric("roce_roce_v2_gid_checked_addresses")};
  FamilyBuilder missing{FindMetric("roce_roce_v2_gid_missing")};
};

void AddNetdev(GidFamilies& f, std::string_view netdev, const NetdevGidCheck& check) {
  for (const auto& [family, family_name] : kAddressFamilyNames) {
    f.checked.Add({netdev, family_name}, check.checked[static_cast<size_t>(family)]);
    for (const auto& [reason, reason_name] : kGidMissReasonNames) {
      const uint32_t count = check.Missing(family, reason);
      if (count > 0) f.missing.Add({netdev, family_name, reason_name}, count);
    }
  }
}

}  // namespace

void RenderGids(const Snapshot& snapshot, MetricSink& out) {
  if (!snapshot.gids) return;  // --gids.interval=0, no round yet, or the last dump failed
  const GidState& state = *snapshot.gids;
  GidFamilies f;
  std::string port_label;
  for (const PortGidCounts& port : state.ports) {
    if (snapshot.FindDevice(port.netdev) == nullptr) continue;
    port_label = std::to_string(port.port);
    // RoCE v1 GIDs are not counted: mlx5 adds one beside each v2 GID, and the check's v1_only
    // reason names an address that has only that (docs/gids.md "Metrics").
    f.gids.Add({port.device, port_label}, port.roce_v2);
  }
  for (const auto& [netdev, check] : state.netdevs)
    if (snapshot.FindDevice(netdev) != nullptr) AddNetdev(f, netdev, check);
  for (FamilyBuilder* family : {&f.gids, &f.checked, &f.missing}) family->AppendTo(out);
  FamilyBuilder interval(FindMetric("roce_exporter_gids_interval_seconds"));
  interval.Add({}, state.interval_seconds);
  interval.AppendTo(out);
}

}  // namespace roceqos
