#include "exporter/render/text_format.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "base/utf8.h"

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

namespace {

// What a byte needs in a label value or HELP text: nothing (most bytes: written as part of a run),
// an escape, or a UTF-8 check (a byte >= 0x80). One table load per byte keeps the common case, an
// ASCII netdev name or number, one compare per byte.
enum ByteClass : uint8_t { kPlain, kEscape, kNonAscii };
struct ByteClasses {
  std::array<ByteClass, 256> of{};
};
constexpr ByteClasses MakeClasses(std::string_view escaped) {
  ByteClasses classes;
  for (size_t b = 0x80; b < 256; ++b) classes.of[b] = kNonAscii;
  for (char c : escaped) classes.of[static_cast<uint8_t>(c)] = kEscape;
  return classes;
}
constexpr ByteClasses kLabelValueClasses = MakeClasses("\\\"\n");
constexpr ByteClasses kHelpClasses = MakeClasses("\\\n");

void AppendEscaped(std::string& out, std::string_view text, const ByteClasses& classes) {
  size_t run = 0;  // start of the bytes not yet appended, which need nothing
  size_t i = 0;
  while (i < text.size()) {
    const ByteClass kind = classes.of[static_cast<uint8_t>(text[i])];
    if (kind == kPlain) {
      ++i;
      continue;
    }
    if (kind == kNonAscii) {
      const Utf8Step step = NextUtf8(text.substr(i));
      if (step.valid) {
        i += step.length;
        continue;
      }
      out.append(text.data() + run, i - run);
      out += kUtf8Replacement;
      i += step.length;
    } else {
      out.append(text.data() + run, i - run);
      out += '\\';
      out += text[i] == '\n' ? 'n' : text[i];
      ++i;
    }
    run = i;
  }
  out.append(text.data() + run, text.size() - run);
}

}  // namespace

void AppendLabelValue(std::string& out, std::string_view value) {
  AppendEscaped(out, value, kLabelValueClasses);
}

void AppendHelpText(std::string& out, std::string_view help) {
  AppendEscaped(out, help, kHelpClasses);
}

}  // namespace roceqos
