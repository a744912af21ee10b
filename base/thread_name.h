#pragma once

// Names the calling thread, so `top -H`, `ps -L`, perf and gdb show which of the exporter's loops
// (sampler, render worker, QoS monitor, remediation worker, pollers) a thread is and what it
// costs. Linux keeps 15 characters (TASK_COMM_LEN 16 with the NUL): longer names are cut.

#include <cstddef>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace roceqos {

inline constexpr size_t kMaxThreadNameLength = 15;

/// Best effort: a thread that cannot be named keeps its inherited name.
void NameCurrentThread(std::string_view name);

/// A thread that names itself `name`, then runs `body`.
template <typename Body>
std::thread NamedThread(std::string name, Body body) {
  return std::thread([name = std::move(name), body = std::move(body)]() mutable {
    NameCurrentThread(name);
    body();
  });
}

}  // namespace roceqos
