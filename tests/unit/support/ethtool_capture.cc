#include "tests/unit/support/ethtool_capture.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace roceqos::testing {
namespace {

std::string_view Trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// ethtool prints "     %.*s: %llu" per statistic.
std::optional<EthtoolStat> ParseStatLine(std::string_view line) {
  line = Trim(line);
  const auto separator = line.rfind(": ");
  if (separator == std::string_view::npos || separator == 0) return std::nullopt;
  const std::string_view name = line.substr(0, separator);
  const std::string_view digits = line.substr(separator + 2);
  if (name.find_first_of(" \t`#") != std::string_view::npos || digits.empty()) return std::nullopt;
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return EthtoolStat{std::string(name), value};
}

}  // namespace

std::string_view CaptureBody(std::string_view text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (text.substr(start, end - start).starts_with("# ----")) return text.substr(end + 1);
    start = end + 1;
  }
  return text;
}

std::vector<EthtoolBlock> ParseEthtoolStats(std::string_view text) {
  std::vector<EthtoolBlock> blocks;
  EthtoolBlock current;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (auto stat = ParseStatLine(text.substr(start, end - start))) {
      current.push_back(std::move(*stat));
    } else if (!current.empty()) {
      blocks.push_back(std::move(current));
      current.clear();
    }
    start = end + 1;
  }
  if (!current.empty()) blocks.push_back(std::move(current));
  return blocks;
}

std::string ReadCapture(std::string_view prefix, const std::string& dir) {
#ifdef ROCEQOS_CAPTURES_DIR
  const std::filesystem::path root = dir.empty() ? std::string(ROCEQOS_CAPTURES_DIR) : dir;
#else
  const std::filesystem::path root = dir;
#endif
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    if (!entry.path().filename().string().starts_with(prefix)) continue;
    std::ifstream file(entry.path());
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
  }
  return {};
}

std::vector<std::string> Names(const EthtoolBlock& block) {
  std::vector<std::string> names;
  names.reserve(block.size());
  for (const auto& stat : block) names.push_back(stat.name);
  return names;
}

std::vector<uint64_t> Values(const EthtoolBlock& block) {
  std::vector<uint64_t> values;
  values.reserve(block.size());
  for (const auto& stat : block) values.push_back(stat.value);
  return values;
}

}  // namespace roceqos::testing
