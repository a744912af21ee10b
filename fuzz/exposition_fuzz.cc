// The exposition writer (exporter/render/text_format.cc through FamilyBuilder, what /metrics
// serves): arbitrary bytes as HELP text and label values (what a switch's LLDP strings, a module
// EEPROM or a netdev name may hold). The input is length-prefixed pieces, [length byte][bytes]...:
// the first is the HELP text, the others label values, three per sample. The body must be valid
// UTF-8, every line must parse as the text format's line structure (HELP, TYPE, samples with
// quoted label values using only the \\ \" \n escapes), and each value must read back as the input
// with ill-formed UTF-8 replaced by U+FFFD. Any violation aborts.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/text_format.h"

namespace {

using roceqos::ValidUtf8;

constexpr std::string_view kName = "roce_fuzz_metric";
constexpr size_t kLabels = 3;

void Check(bool ok) {
  if (!ok) std::abort();
}

// The text after a backslash-escaped stretch ends at `end` (a '"' for a label value, the line's
// end for HELP): undone, or nullopt for an escape the format does not have or an unescaped quote.
std::optional<std::string> Unescape(std::string_view line, size_t& pos, bool quoted) {
  std::string out;
  while (pos < line.size()) {
    const char c = line[pos++];
    if (quoted && c == '"') return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos >= line.size()) return std::nullopt;
    const char e = line[pos++];
    if (e == 'n') {
      out += '\n';
    } else if (e == '\\' || (quoted && e == '"')) {
      out += e;
    } else {
      return std::nullopt;
    }
  }
  if (quoted) return std::nullopt;  // no closing quote
  return out;
}

// One sample line: the name, {a="..",b="..",c=".."}, a space and the value; the label values read
// back as `want`.
void CheckSample(std::string_view line, const std::vector<std::string>& want, size_t index) {
  Check(line.starts_with(kName) && line.size() > kName.size() && line[kName.size()] == '{');
  size_t pos = kName.size() + 1;
  constexpr std::string_view kNames[kLabels] = {"a", "b", "c"};
  for (size_t i = 0; i < kLabels; ++i) {
    const std::string prefix = std::string(i == 0 ? "" : ",") + std::string(kNames[i]) + "=\"";
    Check(line.substr(pos).starts_with(prefix));
    pos += prefix.size();
    std::optional<std::string> value = Unescape(line, pos, true);
    Check(value.has_value() && *value == ValidUtf8(want[index * kLabels + i]));
  }
  std::string tail = "} ";
  roceqos::AppendSampleValue(tail, static_cast<double>(index));
  Check(line.substr(pos) == tail);
}

void CheckBody(std::string_view body, std::string_view help,
               const std::vector<std::string>& values) {
  Check(roceqos::IsValidUtf8(body));
  Check(body.empty() || body.back() == '\n');
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < body.size();) {
    const size_t end = body.find('\n', start);
    lines.push_back(body.substr(start, end - start));
    start = end + 1;
  }
  const size_t samples = values.size() / kLabels;
  if (samples == 0) {
    Check(body.empty());  // a family without samples is not written
    return;
  }
  size_t next = 0;
  if (!help.empty()) {
    const std::string prefix = "# HELP " + std::string(kName) + " ";
    Check(lines.at(next).starts_with(prefix));
    size_t pos = prefix.size();
    std::optional<std::string> text = Unescape(lines[next++], pos, false);
    Check(text.has_value() && *text == ValidUtf8(help));
  }
  Check(lines.at(next++) == "# TYPE " + std::string(kName) + " gauge");
  Check(lines.size() == next + samples);
  for (size_t i = 0; i < samples; ++i) CheckSample(lines[next + i], values, i);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> pieces;
  for (size_t pos = 0; pos < size;) {
    const size_t length = std::min<size_t>(data[pos], size - pos - 1);
    pieces.emplace_back(reinterpret_cast<const char*>(data) + pos + 1, length);
    pos += 1 + length;
  }
  if (pieces.empty()) return 0;
  const std::string help = pieces.front();
  std::vector<std::string> values(pieces.begin() + 1, pieces.end());
  values.resize(values.size() - values.size() % kLabels);

  const roceqos::MetricDef def{kName, roceqos::MetricKind::kGauge, help, {"a", "b", "c"}, "self",
                               "fuzz"};
  roceqos::FamilyBuilder family(def);
  for (size_t i = 0; i + kLabels <= values.size(); i += kLabels)
    family.Add({values[i], values[i + 1], values[i + 2]}, static_cast<double>(i / kLabels));
  std::string body;
  roceqos::MetricSink sink(body);
  family.AppendTo(sink);
  CheckBody(body, help, values);
  return 0;
}
