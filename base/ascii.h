#pragma once

// Character classes of the identifiers the collectors validate (pod UIDs, container IDs, PCI
// addresses), in the C locale whatever the process's locale is.

namespace roceqos {

constexpr bool IsDecimalDigit(char c) { return c >= '0' && c <= '9'; }
/// 0-9 and a-f: the kubelet's and the container runtimes' IDs are lower-case.
constexpr bool IsLowerHexDigit(char c) { return IsDecimalDigit(c) || (c >= 'a' && c <= 'f'); }

}  // namespace roceqos
