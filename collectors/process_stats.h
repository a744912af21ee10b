#pragma once

// The exporter's own process figures behind the process_* metrics every Prometheus client library
// exports (CPU time, memory, file descriptors, start time), read from procfs of the process itself
// (/proc/self), never from the capture seam: a replay reports the replaying process. The parsers
// take file contents so fixtures and the fuzzer can feed them.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace roceqos {

/// What /proc/self/stat gives the metrics, in clock ticks (sysconf(_SC_CLK_TCK)).
struct ProcStatTimes {
  uint64_t utime_ticks = 0;      // field 14
  uint64_t stime_ticks = 0;      // field 15
  uint64_t starttime_ticks = 0;  // field 22: since boot
};

/// /proc/self/status VmRSS and VmSize.
struct ProcStatusMemory {
  uint64_t resident_bytes = 0;
  uint64_t virtual_bytes = 0;
};

/// The process_* values as the Prometheus client conventions define them.
struct ProcessStats {
  double cpu_seconds = 0;         // process_cpu_seconds_total (user + system)
  double resident_bytes = 0;      // process_resident_memory_bytes
  double virtual_bytes = 0;       // process_virtual_memory_bytes
  double open_fds = 0;            // process_open_fds
  double max_fds = 0;             // process_max_fds (soft limit; +Inf when unlimited)
  double start_time_seconds = 0;  // process_start_time_seconds (Unix time)
};

/// proc(5) /proc/pid/stat: "pid (comm) state ..."; comm may hold spaces and ')', so the fields
/// are counted from the last ')'.
Result<ProcStatTimes> ParseProcStat(std::string_view content);
/// proc(5) /proc/pid/status: the "VmRSS:" and "VmSize:" lines, in kB.
Result<ProcStatusMemory> ParseProcStatus(std::string_view content);
/// proc(5) /proc/pid/limits: the soft limit of "Max open files" ("unlimited" is +Inf).
Result<double> ParseMaxOpenFiles(std::string_view content);
/// proc(5) /proc/stat: "btime", boot time in seconds since the epoch.
Result<uint64_t> ParseBootTime(std::string_view content);

/// Reads the calling process's figures from `procfs` (the process's own /proc: self/stat,
/// self/status, self/limits, self/fd and stat). Four small reads and one directory listing.
Result<ProcessStats> ReadProcessStats(const std::string& procfs = "/proc");

}  // namespace roceqos
