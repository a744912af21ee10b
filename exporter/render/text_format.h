#pragma once

// The pieces of the Prometheus text format 0.0.4 as prometheus-cpp 1.0.1's TextSerializer writes
// them, for the direct writer of /metrics (metric_family_builder.h): the same bytes without an
// std::ostream per value. tests/unit/exporter/render/text_format_test.cc holds them to the
// serializer byte for byte.
//
// One difference: the text format is UTF-8, and a label value or HELP text that is not (a byte
// 0xff in a switch's LLDP system name, a netdev name, a module EEPROM field) would make
// Prometheus reject the whole scrape ("invalid label value"). prometheus-cpp passes such bytes
// through; these writers replace every ill-formed subsequence with U+FFFD (base/utf8.h), so the
// body is valid UTF-8 whatever its sources hold. Well-formed text is written unchanged.

#include <string>
#include <string_view>

namespace roceqos {

/// A sample value: "%.16g" (prometheus-cpp sets the stream precision to max_digits10 - 1),
/// "Nan", "+Inf", "-Inf".
void AppendSampleValue(std::string& out, double value);

/// A label value between its quotes: backslash and double quote escaped with a backslash, a
/// newline as \n, ill-formed UTF-8 as U+FFFD.
void AppendLabelValue(std::string& out, std::string_view value);

/// The text of a HELP line after the metric name: backslash as \\, a newline as \n (the format's
/// only HELP escapes), ill-formed UTF-8 as U+FFFD.
void AppendHelpText(std::string& out, std::string_view help);

}  // namespace roceqos
