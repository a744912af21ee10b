#pragma once

// What to say when a thread cannot be created. pthread_create answers EAGAIN ("Resource
// temporarily unavailable") when a task limit is reached, which names none of them: the pids
// cgroup's pids.max (systemd sets it from the unit's TasksMax=) and RLIMIT_NPROC (ulimit -u,
// counted over every thread of the user). The message names both, with their values here.

#include <string>
#include <string_view>

namespace roceqos {

/// "cannot create a thread (`what`): ..." followed by the limits found and where to raise them.
std::string ThreadLimitMessage(std::string_view what);

/// The same for a path under a test root: `proc_self_cgroup` and `cgroup_root` stand in for
/// /proc/self/cgroup and /sys/fs/cgroup.
std::string ThreadLimitMessage(std::string_view what, const std::string& proc_self_cgroup,
                               const std::string& cgroup_root);

}  // namespace roceqos
