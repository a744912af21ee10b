#pragma once

// One mechanism for every enum <-> name mapping (label values, policy keys, flag values): a
// constexpr table per enum, looked up both ways. A table is the single place a name is spelled, so
// parsing and printing cannot disagree.

#include <cstddef>
#include <optional>
#include <string_view>

namespace roceqos {

template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

/// The name of `value` in `table`, or `fallback` when the table lacks it (a value cast from a
/// wider integer, for example).
template <typename Enum, std::size_t N>
constexpr std::string_view NameOf(const EnumName<Enum> (&table)[N], Enum value,
                                  std::string_view fallback = "unknown") {
  for (const auto& entry : table)
    if (entry.value == value) return entry.name;
  return fallback;
}

/// The value named `name` in `table`, or nullopt.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> ValueOf(const EnumName<Enum> (&table)[N], std::string_view name) {
  for (const auto& entry : table)
    if (entry.name == name) return entry.value;
  return std::nullopt;
}

}  // namespace roceqos
