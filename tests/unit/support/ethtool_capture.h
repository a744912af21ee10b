#pragma once

// Reads `ethtool -S` text: live output and the real captures in tests/fixtures/captures/
// (provenance header, then the body after the "# ----" marker line; bodies may be indented, lack
// the "NIC statistics:" line, or hold several grep outputs separated by commands and prose).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roceqos::testing {

struct EthtoolStat {
  std::string name;
  uint64_t value = 0;

  bool operator==(const EthtoolStat&) const = default;
};

/// One uninterrupted run of "name: value" lines (one `ethtool -S` output or one grep of it).
using EthtoolBlock = std::vector<EthtoolStat>;

/// The text after the provenance header's "# ----" marker line (the whole text if there is none).
std::string_view CaptureBody(std::string_view text);

/// Splits `ethtool -S` text into blocks. Any other line (blank, "NIC statistics:", a command, a
/// code fence, prose) ends the current block.
std::vector<EthtoolBlock> ParseEthtoolStats(std::string_view text);

/// Reads the capture whose file name starts with `prefix` (e.g. "24_") from ROCEQOS_CAPTURES_DIR
/// (or `dir` when given). Returns an empty string when it is not found.
std::string ReadCapture(std::string_view prefix, const std::string& dir = "");

std::vector<std::string> Names(const EthtoolBlock& block);
std::vector<uint64_t> Values(const EthtoolBlock& block);

}  // namespace roceqos::testing
