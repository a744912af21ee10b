#pragma once

// What the attribution poller (exporter/sampling/attribution_poller.h) publishes: the QPs held
// on each selected netdev's RDMA ports, counted per owner (pod, Slurm job, systemd unit, kernel
// module, unknown), and the poller's counts. Plain data beside the snapshot that carries it, so
// render/ reads it without knowing the poller (docs/attribution.md).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace roceqos {

/// One roce_workload_qps series: the QPs one owner holds on one RDMA device's ports bound to one
/// netdev. Only owners holding QPs have a row.
struct AttributionRow {
  std::string netdev;
  std::string rdma_device;
  std::string kind;           // "pod", "slurm_job", "systemd_unit", "kernel", "unknown"
  std::string workload;       // "NAMESPACE/NAME" or the pod UID, job ID, unit, module; "" unknown
  std::string pod_namespace;  // kind=pod with a known name only
  std::string pod_name;       // kind=pod with a known name only
  std::string pod_uid;        // kind=pod only
  uint64_t qps = 0;

  bool operator==(const AttributionRow&) const = default;
};

struct AttributionState {
  /// Sorted by (netdev, rdma_device, kind, workload, pod_uid); rebuilt every round, so a device,
  /// netdev or owner gone since the last round has no row.
  std::vector<AttributionRow> rows;
  uint64_t reads = 0;  // QP dumps attempted since start (one per RDMA device per round)
  /// reason -> failed reads since start (QP dumps, /proc/PID/cgroup, the pod log directory);
  /// every reason is present (0 until it happens).
  std::map<std::string, uint64_t> errors;
  double interval_seconds = 0;  // --attribution.interval
};

}  // namespace roceqos
