#include "collectors/transceiver/module_fields.h"

namespace roceqos::module_fields {

std::string Ascii(std::span<const uint8_t> page, size_t offset, size_t length) {
  std::string text;
  text.reserve(length);
  for (size_t i = offset; i < offset + length && i < page.size(); ++i) {
    const uint8_t c = page[i];
    text.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : (c == 0 ? '\0' : '?'));
  }
  // The specs pad with ASCII spaces; blank EEPROMs read 0x00 or 0xff.
  while (!text.empty() && (text.back() == ' ' || text.back() == '\0')) text.pop_back();
  // A NUL inside the field ends it (some vendors NUL-terminate instead of padding).
  if (size_t nul = text.find('\0'); nul != std::string::npos) text.resize(nul);
  return text;
}

}  // namespace roceqos::module_fields
