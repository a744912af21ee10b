// Consumers of each RDMA device: what the attribution poller last counted
// (exporter/sampling/attribution_poller.h), attached to the snapshot. Only netdevs of the
// rendered snapshot are shown, so a device that left the selection or vanished has no series
// even while the poller's state still lists it.
//
// Series per netdev: one per owner holding QPs on it, at most 256 plus one kind="unknown"
// (docs/attribution.md "Cardinality").

#include <functional>
#include <set>
#include <string>

#include "exporter/core/attribution_state.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {

void RenderAttribution(const Snapshot& snapshot, MetricSink& out) {
  if (!snapshot.attribution) return;  // --attribution.interval=0, or no round finished yet
  const AttributionState& state = *snapshot.attribution;
  std::set<std::string, std::less<>> netdevs;
  for (const DeviceSnapshot& snap : snapshot.devices) {
    if (snap.device) netdevs.insert(snap.device->name);
  }
  FamilyBuilder qps(FindMetric("roce_workload_qps"));
  for (const AttributionRow& row : state.rows) {
    if (!netdevs.contains(row.netdev)) continue;
    qps.Add({row.netdev, row.rdma_device, row.kind, row.workload, row.pod_namespace, row.pod_name,
             row.pod_uid},
            static_cast<double>(row.qps));
  }
  qps.AppendTo(out);
  FamilyBuilder gpus(FindMetric("roce_workload_gpu_info"));
  for (const AttributionGpuRow& row : state.gpus) {
    gpus.Add({row.pod_namespace, row.pod_name, row.pod_uid, row.resource, row.device_id}, 1);
  }
  gpus.AppendTo(out);
  FamilyBuilder vfs(FindMetric("roce_workload_vf_info"));
  for (const AttributionVfRow& row : state.vfs) {
    if (!netdevs.contains(row.netdev)) continue;
    vfs.Add({row.netdev, row.pod_namespace, row.pod_name, row.pod_uid, row.resource,
             row.vf_pci_address},
            1);
  }
  vfs.AppendTo(out);

  FamilyBuilder reads(FindMetric("roce_exporter_attribution_reads_total"));
  reads.Add({}, static_cast<double>(state.reads));
  reads.AppendTo(out);
  FamilyBuilder errors(FindMetric("roce_exporter_attribution_read_errors_total"));
  for (const auto& [reason, count] : state.errors) errors.Add({reason}, static_cast<double>(count));
  errors.AppendTo(out);
  FamilyBuilder interval(FindMetric("roce_exporter_attribution_interval_seconds"));
  interval.Add({}, state.interval_seconds);
  interval.AppendTo(out);
}

}  // namespace roceqos
