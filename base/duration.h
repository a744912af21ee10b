#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/result.h"

namespace roceqos {

/// Parses a Prometheus-style duration: one or more <integer><unit> with units in decreasing
/// order, each at most once: y (365d), w, d, h, m, s, ms. "0" alone is zero. Examples: 250ms,
/// 5s, 1m30s. Errors name the input.
Result<std::chrono::nanoseconds> ParseDuration(std::string_view text);

/// The shortest Prometheus-style text for `d` at millisecond resolution ("250ms", "5s", "1m30s").
std::string FormatDuration(std::chrono::nanoseconds d);

}  // namespace roceqos
