#pragma once

// The attribution poller: its own thread counts, once per --attribution.interval, the QPs held on
// the RDMA ports bound to every selected netdev, per owner (docs/attribution.md). One restrack QP
// dump per RDMA device (collectors/rdma_resources.h), one /proc/PID/cgroup read per PID holding
// QPs (collectors/cgroup_owner.h), one listing of the kubelet's pod log directories for pod names
// (collectors/pod_log_dirs.h), then an immutable AttributionState the sampler attaches to its
// snapshot like the PCIe poller's. Off by default: it needs the host PID namespace to see other
// processes' QPs.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/published.h"
#include "base/result.h"
#include "collectors/cgroup_owner.h"
#include "collectors/pod_log_dirs.h"
#include "collectors/rdma_resources.h"
#include "exporter/core/attribution_state.h"
#include "exporter/core/fault_log.h"
#include "exporter/core/periodic_thread.h"

namespace roceqos {

/// One RDMA port bound to a selected netdev (Device::rdma_ports of the sampler's selection). A
/// LAG port appears under the bond and under each of its slaves that is selected.
struct AttributionTarget {
  std::string netdev;
  std::string rdma_device;
  uint32_t device_index = 0;
  uint32_t port = 0;
  std::string pci_address;  // the netdev's PCI function ("" when not PCI): where its VFs hang

  bool operator<(const AttributionTarget& other) const {
    return std::tie(device_index, port, netdev, rdma_device, pci_address) <
           std::tie(other.device_index, other.port, other.netdev, other.rdma_device,
                    other.pci_address);
  }
};

/// The poller's kernel and file-system reads; tests fake them.
class AttributionIo {
 public:
  virtual ~AttributionIo() = default;
  /// One RDMA_NLDEV_CMD_RES_QP_GET dump of the device into `tally`; ENODEV when it is gone.
  virtual Result<void> DumpQps(uint32_t device_index, RdmaQpTally& tally) = 0;
  /// The device's port count (asked once per device index: it never changes).
  virtual Result<uint32_t> PortCount(uint32_t device_index) = 0;
  /// The owner of `pid` from its cgroup file; nullopt when the process is gone.
  virtual Result<std::optional<CgroupOwner>> ReadOwner(uint32_t pid) = 0;
  /// Pod UID -> namespace and name (empty when there is no pod log directory).
  virtual Result<PodNames> ReadPodNames() = 0;
};

/// The real reads: a NETLINK_RDMA socket opened on first use, `<proc_root>/PID/cgroup`, the
/// listing of `pod_logs_root`.
std::unique_ptr<AttributionIo> MakeKernelAttributionIo(std::string proc_root,
                                                       std::string pod_logs_root);

/// A device the kubelet allocated to a pod (one device ID of one container's resource).
struct PodDevice {
  std::string pod_namespace;
  std::string pod_name;
  std::string resource;
  std::string device_id;
  /// When device_id is an SR-IOV VF's PCI address: its PF's ("" otherwise), which the source
  /// reads from sysfs (collectors/kubelet/pod_resources.h VfPhysfnAddress).
  std::string vf_physfn;
};

/// A GPU as device plugins name their resources: `<vendor>/gpu` (nvidia.com/gpu, amd.com/gpu)
/// and NVIDIA's MIG slices, `nvidia.com/mig-<profile>`.
bool IsGpuResource(std::string_view resource);

struct AttributionPollerOptions {
  std::chrono::nanoseconds interval = std::chrono::seconds(15);
};

class AttributionPoller {
 public:
  /// The RDMA ports of the sampler's current selection; called on the poller thread.
  using Targets = std::function<std::vector<AttributionTarget>()>;
  /// Pod names from another source (the kubelet's PodResources API); called at most once per
  /// round, only when a pod holds QPs. Its names win over the pod log directories'.
  using PodNameSource = std::function<PodNames()>;
  /// The devices the kubelet allocated (its PodResources List); called once per round.
  using PodDeviceSource = std::function<Result<std::vector<PodDevice>>()>;
  /// At most this many roce_workload_gpu_info rows per round (a 1,024-pod node of 8 GPUs each),
  /// and as many roce_workload_vf_info rows.
  static constexpr size_t kMaxGpuRows = 8192;
  static constexpr size_t kMaxVfRows = 8192;

  /// At most this many owners (every kind but unknown) per netdev; the QPs of the owners beyond
  /// it, the fewest-QP ones, are added to that netdev's kind="unknown" series.
  static constexpr size_t kMaxOwnersPerNetdev = 256;

  AttributionPoller(AttributionPollerOptions options, std::unique_ptr<AttributionIo> io,
                    Targets targets);
  ~AttributionPoller();
  AttributionPoller(const AttributionPoller&) = delete;
  AttributionPoller& operator=(const AttributionPoller&) = delete;

  /// Before Start(); unset (the default) means the pod log directories alone name pods.
  void SetPodNameSource(PodNameSource source) { pod_names_source_ = std::move(source); }
  /// Before Start(); unset (the default): no roce_workload_gpu_info or roce_workload_vf_info.
  void SetPodDeviceSource(PodDeviceSource source) { pod_devices_source_ = std::move(source); }

  /// Dumps every device once and publishes. Not concurrently with itself or a running thread.
  void PollOnce();

  /// Starts the thread (first round immediately, then every interval); Stop() joins. Idempotent.
  void Start();
  void Stop();

  /// The latest published state; null before the first round. Thread-safe, never blocks.
  std::shared_ptr<const AttributionState> Latest() const { return latest_.Load(); }

 private:
  struct Owner;
  class Round;

  AttributionPollerOptions options_;
  std::unique_ptr<AttributionIo> io_;
  Targets targets_;
  PodNameSource pod_names_source_;
  PodDeviceSource pod_devices_source_;
  FaultLog fault_log_;
  uint64_t reads_ = 0;
  std::map<std::string, uint64_t> errors_;
  std::unordered_map<uint32_t, uint32_t> port_counts_;  // device index -> ports
  Published<AttributionState> latest_;
  PeriodicThread thread_;  // last: stopped before the members its rounds use are destroyed
};

}  // namespace roceqos
