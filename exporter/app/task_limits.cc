#include "exporter/app/task_limits.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <fstream>
#include <optional>
#include <sstream>

namespace roceqos {
namespace {

// The threads the exporter runs at its defaults (docs/performance.md, "Tasks").
constexpr int kThreadsAtDefaults = 11;

std::optional<std::string> FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// The pids controller's directory of this process: the v1 hierarchy named "pids", else the v2
// unified one ("0::/path").
std::optional<std::string> PidsCgroupDir(const std::string& proc_self_cgroup,
                                         const std::string& cgroup_root) {
  std::ifstream in(proc_self_cgroup);
  std::string line;
  std::optional<std::string> unified;
  while (std::getline(in, line)) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    std::stringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');) {
      if (c == "pids") return fmt::format("{}/pids{}", cgroup_root, path);
    }
    if (line.rfind("0::", 0) == 0) unified = cgroup_root + path;
  }
  return unified;
}

std::string PidsLimit(const std::string& proc_self_cgroup, const std::string& cgroup_root) {
  const std::optional<std::string> dir = PidsCgroupDir(proc_self_cgroup, cgroup_root);
  const std::optional<std::string> max =
      dir ? FirstLine(*dir + "/pids.max") : std::optional<std::string>();
  if (!max) return "the cgroup's pids.max (systemd's TasksMax=; not readable here)";
  const std::optional<std::string> current = FirstLine(*dir + "/pids.current");
  return fmt::format(
      "the cgroup's pids.max = {} ({}/pids.max{}), which systemd sets from the "
      "unit's TasksMax=",
      *max, *dir, current ? ", " + *current + " tasks in it now" : "");
}

std::string NprocLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NPROC, &limit) != 0) return "RLIMIT_NPROC (ulimit -u)";
  const std::string value =
      limit.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(limit.rlim_cur);
  return fmt::format(
      "RLIMIT_NPROC (ulimit -u, systemd's LimitNPROC=) = {}, counted over every thread of the "
      "user",
      value);
}

}  // namespace

std::string ThreadLimitMessage(std::string_view what, const std::string& proc_self_cgroup,
                               const std::string& cgroup_root) {
  return fmt::format(
      "cannot create a thread ({}): a task limit was reached. The exporter runs about {} threads "
      "at its defaults. Likely limits: {}; {}. Raise the one that is reached (TasksMax= of the "
      "unit, pids.max of the container, ulimit -u of the user)",
      what, kThreadsAtDefaults, PidsLimit(proc_self_cgroup, cgroup_root), NprocLimit());
}

std::string ThreadLimitMessage(std::string_view what) {
  return ThreadLimitMessage(what, "/proc/self/cgroup", "/sys/fs/cgroup");
}

}  // namespace roceqos
