#pragma once

// UTF-8 well-formedness (Unicode 15, section 3.9, table 3-7; RFC 3629): what a Prometheus label
// value, a JSON string or a log line must be, and what bytes from a switch, a module EEPROM or a
// netdev name need not be. Overlong forms, surrogates (U+D800..U+DFFF), code points above
// U+10FFFF and truncated sequences are ill-formed; Go's utf8.ValidString, which Prometheus and
// promtool apply to label values, draws the same line.

#include <cstddef>
#include <string>
#include <string_view>

namespace roceqos {

/// U+FFFD REPLACEMENT CHARACTER, encoded.
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

/// One step of decoding at the start of a non-empty `text`: a well-formed sequence of `length`
/// bytes (1 to 4), or an ill-formed one whose `length` is its maximal subpart (the longest prefix
/// of a well-formed sequence, at least 1 byte), so that each ill-formed subsequence becomes one
/// U+FFFD, as the Unicode standard recommends and as Go, Python and WHATWG decoders do.
struct Utf8Step {
  size_t length;
  bool valid;
};
Utf8Step NextUtf8(std::string_view text);

/// Whether all of `text` is well-formed UTF-8.
bool IsValidUtf8(std::string_view text);

/// Appends `text` with every ill-formed subsequence replaced by U+FFFD; well-formed input is
/// appended unchanged.
void AppendValidUtf8(std::string& out, std::string_view text);
std::string ValidUtf8(std::string_view text);

}  // namespace roceqos
