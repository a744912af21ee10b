#pragma once

// The pieces of the Prometheus text format 0.0.4 as prometheus-cpp 1.0.1's TextSerializer writes
// them, for the direct writer of /metrics (metric_family_builder.h): the same bytes without an
// std::ostream per value. tests/unit/exporter/render/text_format_test.cc holds them to the
// serializer byte for byte.

#include <string>
#include <string_view>

namespace roceqos {

/// A sample value: "%.16g" (prometheus-cpp sets the stream precision to max_digits10 - 1),
/// "Nan", "+Inf", "-Inf".
void AppendSampleValue(std::string& out, double value);

/// A label value between its quotes: backslash and double quote escaped with a backslash, a
/// newline as \n.
void AppendLabelValue(std::string& out, std::string_view value);

}  // namespace roceqos
