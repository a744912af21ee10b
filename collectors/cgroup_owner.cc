#include "collectors/cgroup_owner.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/ascii.h"

// Path shapes and their sources (docs/kernel-interfaces.md §13.4):
// - kubelet, pkg/kubelet/cm/cgroup_manager_linux.go: with the systemd driver a cgroup name
//   [kubepods, burstable, pod<uid>] becomes kubepods.slice/kubepods-burstable.slice/
//   kubepods-burstable-pod<uid>.slice, the UID's dashes escaped to underscores because '-' is
//   systemd's slice separator; with the cgroupfs driver it stays /kubepods/burstable/pod<uid>.
//   pkg/kubelet/cm/qos_container_manager_linux.go: Guaranteed pods sit directly under kubepods.
// - the container level is the runtime's: containerd's CRI plugin names a systemd scope
//   cri-containerd-<id>.scope, CRI-O crio-<id>.scope (and crio-conmon-<id>.scope for its
//   monitor), Docker docker-<id>.scope; with cgroupfs the container cgroup is the bare 64-hex ID
//   (CRI-O: crio-<id>).
// - Slurm, src/plugins/cgroup/v1: <controller>/slurm/uid_<uid>/job_<id>/step_<step>/task_<n>
//   (slurm_<nodename> with multiple slurmd); src/plugins/cgroup/v2:
//   system.slice/slurmstepd.scope/job_<id>/step_<step>/user/task_<n> (<nodename>_slurmstepd.scope
//   with multiple slurmd). Steps are numbers or batch, extern, interactive.
// - systemd units: system.slice/foo.service, user.slice/user-1000.slice/session-3.scope,
//   .../user@1000.service/app.slice/bar.service: the deepest unit is the owner.

namespace roceqos {
namespace {

constexpr size_t kMaxComponents = 64;
constexpr size_t kContainerIdLen = 64;
constexpr size_t kUnitNameMax = 255;
constexpr size_t kMaxIdDigits = 10;  // Slurm job and step IDs are uint32_t

using Components = std::array<std::string_view, kMaxComponents>;

bool AllOf(std::string_view s, bool (*pred)(char)) { return std::all_of(s.begin(), s.end(), pred); }

bool ConsumePrefix(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}
bool ConsumeSuffix(std::string_view& s, std::string_view suffix) {
  if (!s.ends_with(suffix)) return false;
  s.remove_suffix(suffix.size());
  return true;
}

/// Splits a path into its components, "." and ".." (a cgroup namespace's view) dropped. Returns
/// the count, or nullopt beyond kMaxComponents.
std::optional<size_t> Split(std::string_view path, Components& out) {
  size_t count = 0;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    if (part.empty() || part == "." || part == "..") continue;
    if (count == kMaxComponents) return std::nullopt;
    out[count++] = part;
  }
  return count;
}

/// A pod UID: the kubelet's dashed UUID (dashes may arrive escaped as '_'), or the 32-hex hash a
/// static pod's UID is. Normalised to lowercase with dashes.
std::optional<std::string> NormalisePodUid(std::string_view raw) {
  std::string uid;
  uid.reserve(raw.size());
  for (char c : raw) {
    if (c == '_') c = '-';
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    uid.push_back(c);
  }
  if (uid.size() == 32 && AllOf(uid, IsLowerHexDigit)) return uid;
  if (uid.size() != 36) return std::nullopt;
  for (size_t i = 0; i < uid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uid[i] != '-' : !IsLowerHexDigit(uid[i])) return std::nullopt;
  }
  return uid;
}

/// The pod level: kubepods[-<qos>]-pod<uid>.slice (systemd) or pod<uid> under kubepods,
/// burstable or besteffort (cgroupfs).
std::optional<std::string_view> PodLevel(std::string_view part, std::string_view parent,
                                         PodQosClass& qos) {
  if (ConsumeSuffix(part, ".slice")) {
    if (!ConsumePrefix(part, "kubepods-")) return std::nullopt;
    qos = ConsumePrefix(part, "burstable-")    ? PodQosClass::kBurstable
          : ConsumePrefix(part, "besteffort-") ? PodQosClass::kBestEffort
                                               : PodQosClass::kGuaranteed;
    if (!ConsumePrefix(part, "pod")) return std::nullopt;
    return part;
  }
  if (!ConsumePrefix(part, "pod")) return std::nullopt;
  if (parent == "kubepods") {
    qos = PodQosClass::kGuaranteed;
  } else if (parent == "burstable") {
    qos = PodQosClass::kBurstable;
  } else if (parent == "besteffort") {
    qos = PodQosClass::kBestEffort;
  } else {
    return std::nullopt;
  }
  return part;
}

/// The container level under a pod: the runtime's scope, or the bare ID (cgroupfs driver).
void ContainerLevel(std::string_view part, CgroupOwner& owner) {
  std::string_view runtime;
  ConsumeSuffix(part, ".scope");
  if (ConsumePrefix(part, "cri-containerd-")) {
    runtime = "containerd";
  } else if (ConsumePrefix(part, "crio-")) {
    runtime = "cri-o";
  } else if (ConsumePrefix(part, "docker-")) {
    runtime = "docker";
  }
  // crio-conmon-<id> (CRI-O's monitor process) and anything else fail here: no container.
  if (part.size() != kContainerIdLen || !AllOf(part, IsLowerHexDigit)) return;
  owner.container_id = std::string(part);
  owner.runtime = std::string(runtime);
}

bool ClassifyPod(const Components& parts, size_t count, CgroupOwner& owner) {
  for (size_t i = 0; i < count; ++i) {
    PodQosClass qos = PodQosClass::kUnknown;
    std::optional<std::string_view> raw = PodLevel(parts[i], i > 0 ? parts[i - 1] : "", qos);
    if (!raw) continue;
    std::optional<std::string> uid = NormalisePodUid(*raw);
    if (!uid) continue;
    owner.kind = CgroupOwnerKind::kPod;
    owner.pod_uid = std::move(*uid);
    owner.qos = qos;
    if (i + 1 < count) ContainerLevel(parts[i + 1], owner);
    return true;
  }
  return false;
}

bool IsSlurmRoot(std::string_view part) {
  return part == "slurm" || part.starts_with("slurm_") || part.ends_with("slurmstepd.scope");
}

std::optional<std::string_view> Numbered(std::string_view part, std::string_view prefix) {
  if (!ConsumePrefix(part, prefix)) return std::nullopt;
  if (part.empty() || part.size() > kMaxIdDigits || !AllOf(part, IsDecimalDigit))
    return std::nullopt;
  return part;
}

bool ClassifySlurm(const Components& parts, size_t count, CgroupOwner& owner) {
  size_t i = 0;
  while (i < count && !IsSlurmRoot(parts[i])) ++i;
  // v1 puts uid_<uid> between the root and the job; v2 does not.
  if (i + 1 < count && Numbered(parts[i + 1], "uid_")) ++i;
  if (i + 1 >= count) return false;
  std::optional<std::string_view> job = Numbered(parts[i + 1], "job_");
  if (!job) return false;
  owner.kind = CgroupOwnerKind::kSlurmJob;
  owner.slurm_job = std::string(*job);
  if (i + 2 < count) {
    std::string_view step = parts[i + 2];
    if (ConsumePrefix(step, "step_") &&
        ((!step.empty() && step.size() <= kMaxIdDigits && AllOf(step, IsDecimalDigit)) ||
         step == "batch" || step == "extern" || step == "interactive")) {
      owner.slurm_step = std::string(step);
    }
  }
  return true;
}

bool IsUnitChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDecimalDigit(c) || c == ':' ||
         c == '_' || c == '.' || c == '\\' || c == '@' || c == '-';
}

bool ClassifyUnit(const Components& parts, size_t count, CgroupOwner& owner) {
  for (size_t i = count; i-- > 0;) {
    std::string_view part = parts[i];
    if (!part.ends_with(".service") && !part.ends_with(".scope")) continue;
    if (part.size() > kUnitNameMax || !AllOf(part, IsUnitChar)) return false;
    owner.kind = CgroupOwnerKind::kSystemdUnit;
    owner.systemd_unit = std::string(part);
    return true;
  }
  return false;
}

int Rank(CgroupOwnerKind kind) {
  switch (kind) {
    case CgroupOwnerKind::kPod:
      return 3;
    case CgroupOwnerKind::kSlurmJob:
      return 2;
    case CgroupOwnerKind::kSystemdUnit:
      return 1;
    case CgroupOwnerKind::kUnknown:
      return 0;
  }
  return 0;
}

}  // namespace

CgroupOwner ClassifyCgroupPath(std::string_view path) {
  CgroupOwner owner;
  Components parts;
  std::optional<size_t> count = Split(path, parts);
  if (!count) return owner;
  if (ClassifyPod(parts, *count, owner)) return owner;
  if (ClassifySlurm(parts, *count, owner)) return owner;
  ClassifyUnit(parts, *count, owner);
  return owner;
}

Result<CgroupOwner> ParseCgroupOwner(std::string_view text) {
  constexpr std::string_view kContext = "/proc/PID/cgroup";
  if (text.empty()) return MakeError(0, fmt::format("{}: empty", kContext));
  if (text.size() > kMaxProcCgroupBytes) {
    return MakeError(0, fmt::format("{}: {} bytes, more than the {} accepted", kContext,
                                    text.size(), kMaxProcCgroupBytes));
  }
  CgroupOwner best;
  size_t line_number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_number;
    if (line.empty()) continue;
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) {
      return MakeError(0, fmt::format("{}: line {} has no hierarchy-ID:controllers:path form",
                                      kContext, line_number));
    }
    std::string_view id = line.substr(0, first);
    std::string_view path = line.substr(second + 1);
    if (id.empty() || id.size() > kMaxIdDigits || !AllOf(id, IsDecimalDigit)) {
      return MakeError(
          0, fmt::format("{}: line {}: hierarchy ID is not a number", kContext, line_number));
    }
    if (!path.starts_with('/')) {
      return MakeError(
          0, fmt::format("{}: line {}: path does not start with '/'", kContext, line_number));
    }
    CgroupOwner owner = ClassifyCgroupPath(path);
    if (Rank(owner.kind) > Rank(best.kind)) best = std::move(owner);
  }
  return best;
}

}  // namespace roceqos
