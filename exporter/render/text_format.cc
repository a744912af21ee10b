#include "exporter/render/text_format.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace roceqos {

void AppendSampleValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "Nan";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-Inf" : "+Inf";
    return;
  }
  char buffer[32];
  std::to_chars_result result{};
  // Most values are counters: an integer below 1e16 prints all its digits under %.16g (the
  // exponent stays below the precision), which the integer conversion writes several times
  // faster. -0 keeps its sign under %g, so it takes the general path.
  constexpr double kWholeDigits = 1e16;
  if (std::fabs(value) < kWholeDigits && value == std::trunc(value) &&
      !(value == 0 && std::signbit(value))) {
    result = std::to_chars(buffer, buffer + sizeof(buffer), static_cast<int64_t>(value));
  } else {
    constexpr int kPrecision = 16;
    result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general,
                           kPrecision);
  }
  out.append(buffer, result.ptr);
}

void AppendLabelValue(std::string& out, std::string_view value) {
  while (!value.empty()) {
    const size_t special = value.find_first_of("\\\"\n");
    if (special == std::string_view::npos) {
      out += value;
      return;
    }
    out.append(value.data(), special);
    out += '\\';
    out += value[special] == '\n' ? 'n' : value[special];
    value.remove_prefix(special + 1);
  }
}

}  // namespace roceqos
