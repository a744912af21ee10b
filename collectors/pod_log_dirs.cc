#include "collectors/pod_log_dirs.h"

#include <dirent.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "base/ascii.h"

namespace roceqos {
namespace {

constexpr size_t kMaxLabel = 63;       // DNS-1123 label (k8s.io/apimachinery validation.go)
constexpr size_t kMaxSubdomain = 253;  // DNS-1123 subdomain
constexpr size_t kUuidLen = 36;
constexpr size_t kStaticUidLen = 32;  // a static pod's UID is the hex hash of its manifest

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabel) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

// Labels joined by '.', at most 253 characters in all.
bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomain) return false;
  while (true) {
    const size_t dot = s.find('.');
    if (!IsDnsLabel(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

// The shapes ParseCgroupOwner normalises a pod UID to (collectors/cgroup_owner.cc), so the two
// join by string equality.
bool IsPodUid(std::string_view s) {
  if (s.size() == kStaticUidLen) return std::all_of(s.begin(), s.end(), IsLowerHexDigit);
  if (s.size() != kUuidLen) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !IsLowerHexDigit(s[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<PodLogDir> ParsePodLogDirName(std::string_view entry) {
  // Neither DNS part holds '_', so the first two underscores are the separators.
  const size_t first = entry.find('_');
  if (first == std::string_view::npos) return std::nullopt;
  const size_t second = entry.find('_', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const std::string_view ns = entry.substr(0, first);
  const std::string_view name = entry.substr(first + 1, second - first - 1);
  const std::string_view uid = entry.substr(second + 1);
  if (!IsDnsLabel(ns) || !IsDnsSubdomain(name) || !IsPodUid(uid)) return std::nullopt;
  return PodLogDir{.uid = std::string(uid),
                   .pod = {.pod_namespace = std::string(ns), .name = std::string(name)}};
}

PodNames PodNamesFromEntries(std::span<const std::string> entries) {
  PodNames names;
  for (const std::string& entry : entries) {
    if (names.size() >= kMaxPodLogDirs) break;
    std::optional<PodLogDir> dir = ParsePodLogDirName(entry);
    if (dir) names.emplace(std::move(dir->uid), std::move(dir->pod));
  }
  return names;
}

Result<PodNames> ReadPodLogDirs(const std::string& root) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(root.c_str()), closedir);
  if (!dir) {
    if (errno == ENOENT || errno == ENOTDIR) return PodNames{};  // no kubelet here: absent
    return MakeError(errno, fmt::format("opendir {}: {}", root, std::strerror(errno)));
  }
  std::vector<std::string> entries;
  while (true) {
    errno = 0;
    const dirent* entry = readdir(dir.get());
    if (entry == nullptr) break;
    // A regular file or symlink there was not made by the kubelet; DT_UNKNOWN (some
    // filesystems) is kept and left to the name check.
    if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN) continue;
    if (entries.size() >= kMaxPodLogDirs * 2) break;  // bounded whatever else sits there
    entries.emplace_back(entry->d_name);
  }
  if (errno != 0)
    return MakeError(errno, fmt::format("readdir {}: {}", root, std::strerror(errno)));
  return PodNamesFromEntries(entries);
}

}  // namespace roceqos
