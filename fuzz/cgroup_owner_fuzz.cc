// /proc/PID/cgroup text (cgroup_owner.cc): every line classified as pod, Slurm job, systemd unit.
#include <string_view>

#include "collectors/cgroup_owner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto owner = roceqos::ParseCgroupOwner(text);
  // The label values a caller would export stay bounded whatever the input.
  if (owner && (owner->pod_uid.size() > 36 || owner->container_id.size() > 64 ||
                owner->slurm_job.size() > 10 || owner->slurm_step.size() > 11 ||
                owner->systemd_unit.size() > 255)) {
    __builtin_trap();
  }
  (void)roceqos::ClassifyCgroupPath(text);
  return 0;
}
