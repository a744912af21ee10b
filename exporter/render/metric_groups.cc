#include "exporter/render/metric_groups.h"

#include <fmt/format.h>

#include <string>

namespace roceqos {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded: '+' is a space, %XX a byte; a '%' not followed by two hex
// digits stays as it is (as Go's net/url would refuse it, the name then matches no group).
std::string FormDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexDigit(s[i + 1]) >= 0 &&
               HexDigit(s[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(s[i + 1]) * 16 + HexDigit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The name as the 400 quotes it: one line of printable ASCII, at most 64 bytes of it.
std::string Printable(std::string_view name) {
  constexpr size_t kMaxQuoted = 64;
  std::string out;
  for (char c : name.substr(0, kMaxQuoted)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (name.size() > kMaxQuoted) out += "...";
  return out;
}

std::string KnownGroups() {
  std::string known;
  for (std::string_view name : kMetricGroupNames) {
    known += known.empty() ? "" : ", ";
    known += name;
  }
  return known;
}

}  // namespace

std::optional<MetricGroups> MetricGroups::Named(std::string_view name) {
  for (size_t i = 0; i < kMetricGroupNames.size(); ++i) {
    if (kMetricGroupNames[i] == name) return MetricGroups(1u << i);
  }
  return std::nullopt;
}

bool MetricGroups::Contains(std::string_view area) const {
  for (size_t i = 0; i < kMetricGroupNames.size(); ++i) {
    if (kMetricGroupNames[i] == area) return (bits_ & (1u << i)) != 0;
  }
  return false;
}

Result<MetricGroups> CollectGroups(std::string_view query) {
  MetricGroups groups = MetricGroups::None();
  bool any = false;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const size_t eq = param.find('=');
    if (FormDecode(param.substr(0, eq)) != "collect[]") continue;
    const std::string name =
        eq == std::string_view::npos ? std::string() : FormDecode(param.substr(eq + 1));
    const std::optional<MetricGroups> group = MetricGroups::Named(name);
    if (!group) {
      return Error{EINVAL, fmt::format("unknown metric group \"{}\" in collect[] (known: {})",
                                       Printable(name), KnownGroups())};
    }
    groups |= *group;
    any = true;
  }
  return any ? groups : MetricGroups::All();
}

}  // namespace roceqos
