#pragma once
// The kubelet's PodResources v1 API (podresources_v1.proto): which pods run on this node and
// which devices (GPUs, SR-IOV VFs, RDMA shared devices) the device plugins allocated to each of
// their containers. One `List` call over the kubelet's unix socket, through gRPC (docs/kubelet.md,
// docs/decisions.md "Kubelet PodResources: Debian's libgrpc++, linked").
//
// The answer is outside input: every name becomes a label value, so MapListResponse keeps only
// names Kubernetes itself would accept and caps every count (the k* limits below).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "base/result.h"

namespace v1 {
class ListPodResourcesResponse;
}  // namespace v1

namespace roceqos::kubelet {

/// The socket the kubelet serves the API on (pkg/kubelet/apis/podresources: the kubelet's
/// root directory's pod-resources/kubelet.sock).
inline constexpr std::string_view kDefaultSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";

/// Caps on what one answer may put into the exporter's memory and label sets. A node runs at most
/// --max-pods pods (110 by default, 250-ish on large nodes); 1024 is far above any real node and
/// still bounds the series. Devices per container: an 8-GPU node with 8 NICs and their VFs
/// allocates a few dozen; 256 device IDs per container (over all its resources) is the cap.
inline constexpr size_t kMaxPods = 1024;
inline constexpr size_t kMaxContainersPerPod = 64;
inline constexpr size_t kMaxDeviceIdsPerContainer = 256;
inline constexpr size_t kMaxNumaNodesPerDevice = 64;
/// Label-safe lengths: namespace and container names are RFC 1123 labels (63), pod names DNS
/// subdomains (253); a resource name is a qualified name, "<DNS subdomain>/<name of 63>"; a device
/// ID is the plugin's own string (a GPU UUID "GPU-<36>", a PCI address): 128 bytes.
inline constexpr size_t kMaxLabelName = 63;
inline constexpr size_t kMaxPodName = 253;
inline constexpr size_t kMaxResourceName = 253 + 1 + 63;
inline constexpr size_t kMaxDeviceId = 128;
/// NUMA node IDs the kernel can have (MAX_NUMNODES = 1 << CONFIG_NODES_SHIFT, at most 1 << 10).
inline constexpr int64_t kMaxNumaNode = 1023;
/// The largest answer accepted, in bytes: 1024 pods with a few hundred devices each stay well
/// under it; gRPC refuses a bigger message with RESOURCE_EXHAUSTED before it is parsed.
inline constexpr int kDefaultMaxResponseBytes = 16 << 20;

/// The devices of one resource allocated to a container.
struct DeviceAllocation {
  std::string resource_name;            // "nvidia.com/gpu", "intel.com/sriov_netdevice"
  std::vector<std::string> device_ids;  // the plugin's IDs, in the kubelet's order
  std::vector<int64_t> numa_nodes;      // from the plugin's topology hint; empty when none
};

struct ContainerAllocation {
  std::string name;
  std::vector<DeviceAllocation> devices;  // only resources with at least one valid device ID
};

/// A pod the kubelet reports. PodResources v1 has no pod UID: the UID of a pod seen in a cgroup
/// path is joined to its name elsewhere (docs/kubelet.md).
struct PodAllocation {
  std::string namespace_name;
  std::string name;
  std::vector<ContainerAllocation> containers;
};

/// One List answer, mapped. `dropped` counts the entries left out because a name or a value was
/// not label-safe (a pod, a container, a device entry or one device ID each count one);
/// `truncated` says a cap above cut the answer short.
struct PodResourcesList {
  std::vector<PodAllocation> pods;
  size_t dropped = 0;
  bool truncated = false;
};

/// One row per allocated device: what roce_workload_gpu_info{namespace, pod, resource, device_id}
/// and a VF -> PF -> netdev mapping are built from.
struct AllocatedDevice {
  std::string namespace_name;
  std::string pod;
  std::string container;
  std::string resource_name;
  std::string device_id;
};

/// Why a List failed, for a `reason` label and for the operator's message.
enum class ListFailure : uint8_t {
  kSocketMissing,     // ENOENT: no kubelet socket at the path (no kubelet, or not mounted)
  kPermissionDenied,  // EACCES: connecting needs write access to the socket
  kUnavailable,       // ECONNREFUSED: gRPC UNAVAILABLE (nobody listens, the kubelet restarts)
  kDeadlineExceeded,  // ETIMEDOUT: no answer within the deadline
  kResponseTooLarge,  // EMSGSIZE: gRPC RESOURCE_EXHAUSTED, the answer is over the size cap
  kUnimplemented,     // EOPNOTSUPP: a kubelet without the v1 service
  kMalformed,         // EPROTO: anything else gRPC reports, or an answer that does not parse
};

inline constexpr EnumName<ListFailure> kListFailureNames[] = {
    {ListFailure::kSocketMissing, "socket_missing"},
    {ListFailure::kPermissionDenied, "permission_denied"},
    {ListFailure::kUnavailable, "unavailable"},
    {ListFailure::kDeadlineExceeded, "deadline_exceeded"},
    {ListFailure::kResponseTooLarge, "response_too_large"},
    {ListFailure::kUnimplemented, "unimplemented"},
    {ListFailure::kMalformed, "malformed"},
};

/// The failure an Error of ListPodResources stands for, from its errnum.
ListFailure ListFailureOf(const Error& error);

struct ListOptions {
  std::chrono::milliseconds deadline{2000};
  int max_response_bytes = kDefaultMaxResponseBytes;
};

/// Calls List on the kubelet at `socket_path` ("unix:" + path, no TLS: the socket's file mode is
/// the access control) and maps the answer. Blocks for at most `options.deadline`.
Result<PodResourcesList> ListPodResources(const std::string& socket_path,
                                          const ListOptions& options = {});

/// The pure half of ListPodResources: validates and caps a parsed answer.
PodResourcesList MapListResponse(const v1::ListPodResourcesResponse& response);
/// The same from the serialized message (ParseFromArray); an Error when it does not parse.
Result<PodResourcesList> MapListResponseBytes(std::span<const std::byte> bytes);

/// Every device of every container, in the answer's order.
std::vector<AllocatedDevice> AllocatedDevices(const PodResourcesList& list);

/// The PCI address a device ID names, lower-cased as sysfs names the function ("0000:3b:00.2"):
/// the SR-IOV device plugin's IDs are the VFs' addresses, so a caller can follow
/// /sys/bus/pci/devices/<id>/physfn to the PF and its netdev. nullopt for any other ID (GPU
/// UUIDs, RDMA shared-device IDs).
std::optional<std::string> PciAddressOfDeviceId(std::string_view device_id);

/// The PF of an SR-IOV VF: the basename of /sys/bus/pci/devices/<vf>/physfn under `sysfs_root`
/// (the kernel's link from a VF to its PF, drivers/pci/iov.c). nullopt when `vf_address` is not
/// a PCI address, the function is gone, or it is not a VF. The PF's netdevs and RDMA devices are
/// then ReadPciFunction(sysfs_root, pf) (collectors/pci_function.h).
std::optional<std::string> VfPhysfnAddress(const std::string& sysfs_root,
                                           std::string_view vf_address);

/// The seam the attribution poller calls: one List per call. Tests substitute their own.
class PodResourcesSource {
 public:
  virtual ~PodResourcesSource() = default;
  virtual Result<PodResourcesList> List() = 0;
};

/// ListPodResources on `socket_path` with `options`, as a PodResourcesSource.
std::unique_ptr<PodResourcesSource> MakeKubeletSource(std::string socket_path,
                                                      ListOptions options = {});

}  // namespace roceqos::kubelet
