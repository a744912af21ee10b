#pragma once

// Names the calling thread, so `top -H`, `ps -L`, perf and gdb show which of the exporter's loops
// (sampler, render worker, QoS monitor, remediation worker, pollers) a thread is and what it
// costs. Linux keeps 15 characters (TASK_COMM_LEN 16 with the NUL): longer names are cut.

#include <cstddef>
#include <string_view>

namespace roceqos {

inline constexpr size_t kMaxThreadNameLength = 15;

/// Best effort: a thread that cannot be named keeps its inherited name.
void NameCurrentThread(std::string_view name);

}  // namespace roceqos
