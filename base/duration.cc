#include "base/duration.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

namespace roceqos {
namespace {

struct Unit {
  std::string_view suffix;
  int64_t millis;
};

// Decreasing order; "ms" before "m" so the longer suffix wins at the same position.
constexpr Unit kUnits[] = {
    {"y", 365LL * 24 * 3600 * 1000},
    {"w", 7LL * 24 * 3600 * 1000},
    {"d", 24LL * 3600 * 1000},
    {"h", 3600LL * 1000},
    {"ms", 1},
    {"m", 60LL * 1000},
    {"s", 1000},
};

// Rank in the y > w > d > h > m > s > ms order used to reject "5s1m" and "1s1s".
int Rank(std::string_view suffix) {
  static constexpr std::string_view kOrder[] = {"y", "w", "d", "h", "m", "s", "ms"};
  for (int i = 0; i < 7; ++i) {
    if (kOrder[i] == suffix) return i;
  }
  return -1;
}

}  // namespace

Result<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  auto invalid = [&](std::string_view why) {
    return MakeError(EINVAL, fmt::format("invalid duration \"{}\": {}", text, why));
  };
  if (text.empty()) return invalid("empty");
  if (text == "0") return std::chrono::nanoseconds(0);

  int64_t total_ms = 0;
  int last_rank = -1;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t digits_start = pos;
    int64_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (value > (std::numeric_limits<int64_t>::max() - 9) / 10) return invalid("too large");
      value = value * 10 + (text[pos] - '0');
      ++pos;
    }
    if (pos == digits_start) return invalid("expected a number (e.g. 250ms, 5s, 1m)");
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (text.substr(pos, u.suffix.size()) == u.suffix) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) return invalid("unknown or missing unit (use ms, s, m, h, d, w, y)");
    pos += unit->suffix.size();
    const int rank = Rank(unit->suffix);
    if (rank <= last_rank) return invalid("units must appear once, largest first");
    last_rank = rank;
    if (value > (std::numeric_limits<int64_t>::max() / 1'000'000 - total_ms) / unit->millis) {
      return invalid("too large");
    }
    total_ms += value * unit->millis;
  }
  return std::chrono::nanoseconds(std::chrono::milliseconds(total_ms));
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms == 0) return "0s";
  std::string out;
  static constexpr Unit kFormatUnits[] = {
      {"y", 365LL * 24 * 3600 * 1000},
      {"w", 7LL * 24 * 3600 * 1000},
      {"d", 24LL * 3600 * 1000},
      {"h", 3600LL * 1000},
      {"m", 60LL * 1000},
      {"s", 1000},
      {"ms", 1},
  };
  for (const Unit& u : kFormatUnits) {
    if (ms >= u.millis) {
      out += fmt::format("{}{}", ms / u.millis, u.suffix);
      ms %= u.millis;
    }
  }
  return out;
}

}  // namespace roceqos
