#pragma once

// Pod names from the kubelet's pod log directories (docs/attribution.md "Pod names"): the kubelet
// creates /var/log/pods/<namespace>_<name>_<uid>/ for every pod it runs (BuildPodLogsDirectory in
// pkg/kubelet/kuberuntime/helpers.go joins the three with '_'; namespace and pod names are DNS
// names, which never hold '_'). Listing that directory maps each pod UID the cgroup path gives
// (collectors/cgroup_owner.h) to its namespace and name, without the API server or the kubelet
// socket. A parser of the directory's entry names plus the one listing; no file is opened.

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/result.h"

namespace roceqos {

struct PodName {
  std::string pod_namespace;  // a DNS-1123 label, at most 63 characters
  std::string name;           // a DNS-1123 subdomain, at most 253 characters

  bool operator==(const PodName&) const = default;
};

/// pod UID (lowercase dashed UUID, or the 32-hex hash of a static pod, as ParseCgroupOwner gives
/// it) -> its namespace and name.
using PodNames = std::map<std::string, PodName>;

struct PodLogDir {
  std::string uid;
  PodName pod;

  bool operator==(const PodLogDir&) const = default;
};

/// One entry name, "<namespace>_<name>_<uid>". nullopt for anything else (".", a file the
/// kubelet did not make, a part that fails validation: namespace a DNS-1123 label of at most 63
/// characters, name a DNS-1123 subdomain of at most 253, UID a lowercase dashed UUID or 32 hex).
std::optional<PodLogDir> ParsePodLogDirName(std::string_view entry);

/// Every valid entry of `entries`; later duplicates of a UID are ignored. At most
/// kMaxPodLogDirs pods are kept (a node runs at most a few hundred: kubelet's maxPods is 110 by
/// default).
PodNames PodNamesFromEntries(std::span<const std::string> entries);
inline constexpr size_t kMaxPodLogDirs = 4096;

/// Lists `root` (/var/log/pods) and parses its entry names. A missing directory (no kubelet on
/// this host, or not mounted into the container) is an empty map, not an Error; any other
/// opendir/readdir failure is an Error with its errno.
Result<PodNames> ReadPodLogDirs(const std::string& root);

}  // namespace roceqos
