#include "tests/unit/support/module_pages.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace roceqos::testing_support {

Result<ModulePages> ParseModulePagesText(std::string_view text) {
  ModulePages pages;
  std::vector<uint8_t>* current = nullptr;
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    if (line == "[lower]") {
      current = &pages.lower;
      continue;
    }
    unsigned page = 0;
    if (line.rfind("[page ", 0) == 0 && line.back() == ']') {
      auto [end, ec] = std::from_chars(line.data() + 6, line.data() + line.size() - 1, page, 16);
      if (ec != std::errc() || end != line.data() + line.size() - 1 || page > 255) {
        return MakeError(0, fmt::format("line {}: bad section '{}'", number, line));
      }
      current = &pages.upper[static_cast<uint8_t>(page)];
      continue;
    }
    if (current == nullptr)
      return MakeError(0, fmt::format("line {}: bytes before a section", number));
    std::istringstream bytes(line);
    std::string hex;
    while (bytes >> hex) {
      unsigned value = 0;
      auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
      if (ec != std::errc() || end != hex.data() + hex.size() || value > 0xff) {
        return MakeError(0, fmt::format("line {}: bad byte '{}'", number, hex));
      }
      current->push_back(static_cast<uint8_t>(value));
    }
  }
  if (pages.lower.size() != kModuleHalfPage) return MakeError(0, "[lower] is not 128 bytes");
  for (const auto& [page, data] : pages.upper) {
    if (data.size() != kModuleHalfPage) {
      return MakeError(0, fmt::format("[page {:02x}] is {} bytes, not 128", page, data.size()));
    }
  }
  return pages;
}

Result<ModulePages> LoadModulePagesFixture(const std::string& name) {
  const std::string path = std::string(ROCEQOS_FIXTURES_DIR) + "/transceiver/" + name;
  std::ifstream in(path);
  if (!in) return MakeError(ENOENT, "cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  Result<ModulePages> pages = ParseModulePagesText(text.str());
  if (!pages) return MakeError(0, path + ": " + pages.error().message);
  return pages;
}

PageWriter& PageWriter::Byte(size_t spec_byte, uint8_t v) {
  page_[Index(spec_byte)] = v;
  return *this;
}

PageWriter& PageWriter::U16(size_t spec_byte, uint16_t v) {
  page_[Index(spec_byte)] = static_cast<uint8_t>(v >> 8);
  page_[Index(spec_byte) + 1] = static_cast<uint8_t>(v);
  return *this;
}

PageWriter& PageWriter::Ascii(size_t spec_byte, size_t length, std::string_view text) {
  for (size_t i = 0; i < length; ++i) {
    page_[Index(spec_byte) + i] = i < text.size() ? static_cast<uint8_t>(text[i]) : ' ';
  }
  return *this;
}

}  // namespace roceqos::testing_support
