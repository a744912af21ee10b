#pragma once

// Who owns a process, from the text of /proc/PID/cgroup (docs/kernel-interfaces.md §13.4): a
// Kubernetes pod (kubelet's systemd and cgroupfs drivers; containerd, CRI-O and Docker container
// cgroups), a Slurm job (cgroup/v1 and cgroup/v2 plugins), a systemd unit, or unknown. A pure
// parser: the caller reads the file (one read(2) of a few hundred bytes).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/enum_names.h"
#include "base/result.h"

namespace roceqos {

enum class CgroupOwnerKind : uint8_t { kUnknown, kPod, kSlurmJob, kSystemdUnit };
inline constexpr EnumName<CgroupOwnerKind> kCgroupOwnerKindNames[] = {
    {CgroupOwnerKind::kUnknown, "unknown"},
    {CgroupOwnerKind::kPod, "pod"},
    {CgroupOwnerKind::kSlurmJob, "slurm_job"},
    {CgroupOwnerKind::kSystemdUnit, "systemd_unit"},
};

/// The pod's QoS class, read from the kubelet's QoS cgroup level (kubepods-burstable.slice,
/// kubepods/besteffort; a pod directly under kubepods is Guaranteed).
enum class PodQosClass : uint8_t { kUnknown, kGuaranteed, kBurstable, kBestEffort };
inline constexpr EnumName<PodQosClass> kPodQosClassNames[] = {
    {PodQosClass::kUnknown, ""},
    {PodQosClass::kGuaranteed, "Guaranteed"},
    {PodQosClass::kBurstable, "Burstable"},
    {PodQosClass::kBestEffort, "BestEffort"},
};

/// Every string is validated (character set and length) before it is stored, so each may become
/// a label value: at most 64 characters, except systemd_unit (at most 255, systemd's
/// UNIT_NAME_MAX - 1).
struct CgroupOwner {
  CgroupOwnerKind kind = CgroupOwnerKind::kUnknown;
  // kPod
  std::string pod_uid;       // lowercase, with dashes (8-4-4-4-12), or 32 hex for a static pod
  std::string container_id;  // 64 lowercase hex; empty when the process sits in the pod's cgroup
  std::string runtime;       // "containerd", "cri-o", "docker"; empty when the path does not say
  PodQosClass qos = PodQosClass::kUnknown;
  // kSlurmJob
  std::string slurm_job;   // decimal job ID
  std::string slurm_step;  // decimal step ID, "batch", "extern" or "interactive"; may be empty
  // kSystemdUnit
  std::string systemd_unit;  // "foo.service", "session-3.scope"

  bool operator==(const CgroupOwner&) const = default;
};

/// The largest /proc/PID/cgroup text accepted (a cgroup v1 host with every controller mounted
/// and deep paths stays under 4 KiB).
inline constexpr size_t kMaxProcCgroupBytes = size_t{64} * 1024;

/// Parses the whole text of /proc/PID/cgroup ("hierarchy-ID:controller-list:cgroup-path" per
/// line). Every line is classified and the most specific owner wins (pod, then Slurm job, then
/// systemd unit), so a cgroup v1 host where Slurm manages only some controllers still yields the
/// job. Paths relative to a cgroup namespace ("/../../kubepods.slice/...") are read the same way.
/// An Error for text that is not /proc/PID/cgroup (a line without two colons, a hierarchy ID
/// that is not a number, a path not starting with '/', empty or oversized text); kUnknown for a
/// well-formed file whose paths match no known shape.
Result<CgroupOwner> ParseCgroupOwner(std::string_view proc_pid_cgroup);

/// Classifies one cgroup path (the third field of a line).
CgroupOwner ClassifyCgroupPath(std::string_view path);

}  // namespace roceqos
