#pragma once

// Whitespace trimming for the one-line values of sysfs, procfs and configfs files.

#include <string_view>

namespace roceqos {

constexpr bool IsTrimmedWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// `s` without its leading and trailing spaces, tabs, carriage returns and newlines.
constexpr std::string_view TrimWhitespace(std::string_view s) {
  while (!s.empty() && IsTrimmedWhitespace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsTrimmedWhitespace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace roceqos
