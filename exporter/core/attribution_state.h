#pragma once

// What the attribution poller (exporter/sampling/attribution_poller.h) publishes: the QPs held
// on each selected netdev's RDMA ports, counted per owner (pod, Slurm job, systemd unit, kernel
// module, unknown), and the poller's counts. Plain data beside the snapshot that carries it, so
// render/ reads it without knowing the poller (docs/attribution.md).

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
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

/// One roce_workload_gpu_info series: a GPU the kubelet allocated to a pod (PodResources v1
/// List, docs/kubelet.md), with the pod's UID from the pod log directories so it joins
/// roce_workload_qps{pod_uid}.
struct AttributionGpuRow {
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;    // "" when the pod has no log directory (yet)
  std::string resource;   // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "amd.com/gpu"
  std::string device_id;  // the device plugin's ID: a GPU UUID for NVIDIA's
  bool operator==(const AttributionGpuRow&) const = default;
  // Not a defaulted <=>: clang-tidy 14 reads its synthesized 0 as a null pointer constant.
  bool operator<(const AttributionGpuRow& o) const {
    return std::tie(pod_namespace, pod_name, pod_uid, resource, device_id) <
           std::tie(o.pod_namespace, o.pod_name, o.pod_uid, o.resource, o.device_id);
  }
};

/// One roce_workload_vf_info series: an SR-IOV VF the kubelet allocated to a pod, under the
/// selected netdev of its PF. A pod on a VF holds its QPs on the VF's RDMA device, which the PF's
/// QP dump does not show; its traffic still crosses the PF's port.
struct AttributionVfRow {
  std::string netdev;  // the PF's
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;  // "" when the pod has no log directory (yet)
  std::string resource;
  std::string vf_pci_address;  // the device plugin's ID as it gave it: "0000:3b:00.2"
  bool operator==(const AttributionVfRow&) const = default;
  bool operator<(const AttributionVfRow& o) const {
    return std::tie(netdev, pod_namespace, pod_name, pod_uid, resource, vf_pci_address) <
           std::tie(o.netdev, o.pod_namespace, o.pod_name, o.pod_uid, o.resource, o.vf_pci_address);
  }
};

struct AttributionState {
  /// Sorted by (netdev, rdma_device, kind, workload, pod_uid); rebuilt every round, so a device,
  /// netdev or owner gone since the last round has no row.
  std::vector<AttributionRow> rows;
  /// Sorted, one per pod and allocated GPU; empty without --attribution.kubelet-socket or when
  /// this round's List failed (counted in errors).
  std::vector<AttributionGpuRow> gpus;
  /// Sorted, one per pod, allocated VF and selected netdev of its PF; empty as `gpus` is.
  std::vector<AttributionVfRow> vfs;
  uint64_t reads = 0;  // QP dumps attempted since start (one per RDMA device per round)
  /// reason -> failed reads since start (QP dumps, /proc/PID/cgroup, the pod log directory);
  /// every reason is present (0 until it happens).
  std::map<std::string, uint64_t> errors;
  double interval_seconds = 0;  // --attribution.interval
};

}  // namespace roceqos
