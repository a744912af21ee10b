// The kubelet's PodResources v1 List answer (collectors/kubelet/pod_resources.cc): protobuf bytes
// parsed, then validated and capped into the plain values label values are made of.
#include <cstddef>
#include <cstdint>

#include "collectors/kubelet/pod_resources.h"
#include "fuzz/fuzz_util.h"

namespace kubelet = roceqos::kubelet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto list = kubelet::MapListResponseBytes(roceqos::fuzz::AsBytes(data, size));
  if (!list) return 0;
  // Whatever the answer, the caps and the label-safe lengths hold.
  if (list->pods.size() > kubelet::kMaxPods) __builtin_trap();
  for (const kubelet::PodAllocation& pod : list->pods) {
    if (pod.namespace_name.empty() || pod.namespace_name.size() > kubelet::kMaxLabelName ||
        pod.name.empty() || pod.name.size() > kubelet::kMaxPodName ||
        pod.containers.size() > kubelet::kMaxContainersPerPod) {
      __builtin_trap();
    }
    for (const kubelet::ContainerAllocation& container : pod.containers) {
      size_t ids = 0;
      for (const kubelet::DeviceAllocation& devices : container.devices) {
        if (devices.resource_name.size() > kubelet::kMaxResourceName) __builtin_trap();
        for (const std::string& id : devices.device_ids) {
          if (id.empty() || id.size() > kubelet::kMaxDeviceId) __builtin_trap();
          (void)kubelet::PciAddressOfDeviceId(id);
        }
        ids += devices.device_ids.size();
      }
      if (ids > kubelet::kMaxDeviceIdsPerContainer) __builtin_trap();
    }
  }
  (void)kubelet::AllocatedDevices(*list);
  return 0;
}
