#include "base/utf8.h"

#include <cstdint>

namespace roceqos {

Utf8Step NextUtf8(std::string_view text) {
  const auto lead = static_cast<uint8_t>(text[0]);
  if (lead < 0x80) return {1, true};
  // Table 3-7: the lead byte fixes how many continuation bytes follow and the range of the first
  // one; that range is what excludes overlong forms (E0, F0), surrogates (ED) and code points
  // past U+10FFFF (F4). C0, C1 and F5..FF never start a sequence.
  size_t continuations = 0;
  uint8_t low = 0x80;
  uint8_t high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuations = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    continuations = 2;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    continuations = 3;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return {1, false};
  }
  for (size_t i = 1; i <= continuations; ++i) {
    if (i >= text.size()) return {i, false};
    const auto byte = static_cast<uint8_t>(text[i]);
    if (byte < low || byte > high) return {i, false};
    low = 0x80;
    high = 0xBF;
  }
  return {continuations + 1, true};
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const Utf8Step step = NextUtf8(text.substr(i));
    if (!step.valid) return false;
    i += step.length;
  }
  return true;
}

void AppendValidUtf8(std::string& out, std::string_view text) {
  size_t run = 0;  // start of the well-formed bytes not yet appended
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const Utf8Step step = NextUtf8(text.substr(i));
    if (!step.valid) {
      out.append(text.data() + run, i - run);
      out += kUtf8Replacement;
      run = i + step.length;
    }
    i += step.length;
  }
  out.append(text.data() + run, text.size() - run);
}

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendValidUtf8(out, text);
  return out;
}

}  // namespace roceqos
