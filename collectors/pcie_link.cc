#include "collectors/pcie_link.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <utility>

#include "base/trim.h"
#include "collectors/pci_function.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

Result<uint64_t> ParseU64(std::string_view s) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return MakeError(kMalformedText, fmt::format("\"{}\" is not a decimal count", s.substr(0, 32)));
  }
  return value;
}

// One file of a PCI device directory: missing is absent (the kernel hides the link files of a
// device without a PCI Express capability and the AER files of one without AER statistics).
template <typename T, typename Parse>
Result<std::optional<T>> ReadOptional(const std::string& path, Parse parse) {
  FileRead file = ReadSmallFile(path);
  if (file.missing) return std::optional<T>();
  if (!file.error.empty()) return MakeError(file.errnum != 0 ? file.errnum : EIO, file.error);
  auto value = parse(file.content);
  if (!value) return MakeError(kMalformedText, fmt::format("{}: {}", path, value.error().message));
  return std::optional<T>(*value);
}

Result<std::optional<double>> ReadSpeed(const std::string& path) {
  auto read = ReadOptional<std::optional<double>>(path, ParsePcieLinkSpeed);
  if (!read) return read.error();
  return read->value_or(std::nullopt);  // a missing file and "Unknown" are both absent
}

// The link maximum of both ends; either end alone when only it says.
template <typename T>
std::optional<T> LowerOf(std::optional<T> a, std::optional<T> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

}  // namespace

Result<std::optional<double>> ParsePcieLinkSpeed(std::string_view content) {
  // drivers/pci/pci-sysfs.c current_link_speed_show (PCI_EXP_LNKSTA_CLS) / max_link_speed_show
  // (pcie_get_speed_cap: PCI_EXP_LNKCAP2_SLS_* bits, else PCI_EXP_LNKCAP_SLS) print
  // pci_speed_string() (drivers/pci/probe.c): "2.5 GT/s PCIe" .. "64.0 GT/s PCIe", "Unknown" for
  // PCI_SPEED_UNKNOWN. Before 5.2 the same files said "8 GT/s" and "Unknown speed".
  // docs/kernel-interfaces.md §7.11.
  const std::string_view text = TrimWhitespace(content);
  if (StartsWithNoCase(text, "unknown")) return std::optional<double>();
  const size_t unit = text.find(" GT/s");
  if (unit == std::string_view::npos || unit == 0) {
    return MakeError(kMalformedText,
                     fmt::format("\"{}\" is not a PCIe link speed", text.substr(0, 32)));
  }
  const std::string_view number = text.substr(0, unit);
  double gts = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), gts);
  if (ec != std::errc() || end != number.data() + number.size() || !(gts > 0) || gts > 1000) {
    return MakeError(kMalformedText,
                     fmt::format("\"{}\" is not a PCIe link speed", text.substr(0, 32)));
  }
  return std::optional<double>(gts);
}

Result<uint32_t> ParsePcieLinkWidth(std::string_view content) {
  // current_link_width_show: PCI_EXP_LNKSTA_NLW >> PCI_EXP_LNKSTA_NLW_SHIFT, "%u\n";
  // max_link_width_show: pcie_get_width_cap() (PCI_EXP_LNKCAP_MLW), "%u\n". Six bits of field.
  constexpr uint64_t kMaxLanes = 0x3f;
  auto width = ParseU64(TrimWhitespace(content));
  if (!width) return width.error();
  if (*width > kMaxLanes) {
    return MakeError(kMalformedText,
                     fmt::format("link width {} is wider than the 6-bit field", *width));
  }
  return static_cast<uint32_t>(*width);
}

Result<uint64_t> ParseAerTotal(std::string_view content, std::string_view total) {
  // drivers/pci/pcie/aer.c aer_stats_dev_attr(): one "%s %llu\n" line per named error bit (or
  // "<array>_bit[%d] %llu\n" for an unnamed bit that counted), then "TOTAL_%s %llu\n". The bits
  // are those of PCI_ERR_COR_STATUS (ERR_COR) and PCI_ERR_UNCOR_STATUS, split into ERR_NONFATAL
  // and ERR_FATAL by PCI_ERR_UNCOR_SEVER; only the total is kept (docs/pcie.md "Cardinality").
  const std::string expected = fmt::format("TOTAL_{}", total);
  std::optional<uint64_t> found;
  while (!content.empty()) {
    const size_t nl = content.find('\n');
    const std::string_view line = content.substr(0, nl);
    content = nl == std::string_view::npos ? std::string_view{} : content.substr(nl + 1);
    if (line.empty()) continue;
    if (found) return MakeError(kMalformedText, fmt::format("a line follows {}", expected));
    const size_t space = line.rfind(' ');
    if (space == std::string_view::npos || space == 0) {
      return MakeError(kMalformedText,
                       fmt::format("\"{}\" is not \"<error> <count>\"", line.substr(0, 48)));
    }
    auto count = ParseU64(line.substr(space + 1));
    if (!count) return count.error();
    const std::string_view name = line.substr(0, space);
    if (name.starts_with("TOTAL_")) {
      if (name != expected)
        return MakeError(kMalformedText, fmt::format("{} where {} was expected", name, expected));
      found = *count;
    }
  }
  if (!found) return MakeError(kMalformedText, fmt::format("no {} line", expected));
  return *found;
}

std::optional<double> PcieLink::LinkMaxSpeedGts() const {
  return LowerOf(function.max_speed_gts, upstream ? upstream->max_speed_gts : std::nullopt);
}

std::optional<uint32_t> PcieLink::LinkMaxWidth() const {
  // max_link_width 0: a port that does not say (PCI_EXP_LNKCAP_MLW unset).
  auto nonzero = [](std::optional<uint32_t> w) { return w == 0u ? std::nullopt : w; };
  return LowerOf(nonzero(function.max_width),
                 nonzero(upstream ? upstream->max_width : std::nullopt));
}

Result<PcieDeviceLink> ReadPcieDeviceLink(const std::string& dir) {
  PcieDeviceLink link;
  link.address = std::filesystem::path(dir).filename().string();
  auto speed = ReadSpeed(dir + "/current_link_speed");
  if (!speed) return speed.error();
  link.speed_gts = *speed;
  auto max_speed = ReadSpeed(dir + "/max_link_speed");
  if (!max_speed) return max_speed.error();
  link.max_speed_gts = *max_speed;
  for (auto [file, field] : {std::pair{"/current_link_width", &link.width},
                             std::pair{"/max_link_width", &link.max_width}}) {
    auto width = ReadOptional<uint32_t>(dir + file, ParsePcieLinkWidth);
    if (!width) return width.error();
    *field = *width;
  }
  for (auto [file, total, field] :
       {std::tuple{"/aer_dev_correctable", "ERR_COR", &link.aer_correctable},
        std::tuple{"/aer_dev_nonfatal", "ERR_NONFATAL", &link.aer_nonfatal},
        std::tuple{"/aer_dev_fatal", "ERR_FATAL", &link.aer_fatal}}) {
    auto count = ReadOptional<uint64_t>(
        dir + file, [total = total](std::string_view c) { return ParseAerTotal(c, total); });
    if (!count) return count.error();
    *field = *count;
  }
  return link;
}

Result<std::optional<std::filesystem::path>> ResolveNetdevPciFunction(const std::string& sysfs_root,
                                                                      std::string_view netdev) {
  // /sys/class/net/<if>/device links to the parent device; resolved, its directory sits under
  // the bridge it hangs from (/sys/devices/pci0000:00/<root port>/<function>).
  using Resolved = std::optional<std::filesystem::path>;
  const std::filesystem::path link = fmt::format("{}/class/net/{}/device", sysfs_root, netdev);
  std::error_code ec;
  std::filesystem::path function = std::filesystem::canonical(link, ec);
  if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory)
    return Resolved();
  if (ec) return MakeError(ec.value(), fmt::format("resolve {}: {}", link.string(), ec.message()));
  if (!IsPciAddress(function.filename().string())) return Resolved();
  return Resolved(std::move(function));
}

Result<std::optional<PcieLink>> ReadPcieLink(const std::string& sysfs_root,
                                             std::string_view netdev) {
  auto resolved = ResolveNetdevPciFunction(sysfs_root, netdev);
  if (!resolved) return resolved.error();
  if (!resolved->has_value()) return std::optional<PcieLink>();
  const std::filesystem::path& function = **resolved;
  PcieLink result;
  auto own = ReadPcieDeviceLink(function.string());
  if (!own) return own.error();
  result.function = std::move(*own);
  const std::filesystem::path parent = function.parent_path();
  if (IsPciAddress(parent.filename().string())) {
    auto upstream = ReadPcieDeviceLink(parent.string());
    if (!upstream) return upstream.error();
    result.upstream = std::move(*upstream);
  }
  return std::optional<PcieLink>(std::move(result));
}

}  // namespace roceqos
