#include "exporter/render/text_format.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace roceqos {
namespace {

// What prometheus-cpp writes for one untyped sample with one label: the sample line only.
std::string SerializerLine(double value, const std::string& label_value) {
  prometheus::MetricFamily family;
  family.name = "m";
  family.type = prometheus::MetricType::Untyped;
  prometheus::ClientMetric& metric = family.metric.emplace_back();
  metric.label.push_back({"l", label_value});
  metric.untyped.value = value;
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, {family});
  const std::string text = out.str();
  return text.substr(text.find('\n') + 1);  // after "# TYPE m untyped\n"
}

std::string DirectLine(double value, const std::string& label_value) {
  std::string out = "m{l=\"";
  AppendLabelValue(out, label_value);
  out += "\"} ";
  AppendSampleValue(out, value);
  out += '\n';
  return out;
}

std::vector<double> EdgeValues() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return {0.0,
          -0.0,
          1,
          -1,
          0.1,
          2.5,
          1.0 / 3,
          1e-5,
          123456.789,
          999999999999999.0,
          1e15,
          9007199254740991.0,
          9007199254740992.0,
          9999999999999998.0,
          1e16,
          1e16 + 2,
          12345678901234567.0,
          18446744073709551615.0,  // a uint64 counter at its maximum
          -1e16,
          1e300,
          1e-300,
          std::numeric_limits<double>::denorm_min(),
          std::numeric_limits<double>::max(),
          std::numeric_limits<double>::lowest(),
          kInf,
          -kInf,
          std::nan("")};
}

TEST(TextFormat, SampleValuesAsTheSerializerWritesThem) {
  for (double v : EdgeValues()) EXPECT_EQ(DirectLine(v, ""), SerializerLine(v, "")) << v;
}

// Counters (integers of every magnitude), ratios and seconds (fractions), and arbitrary bit
// patterns: every one formatted identically.
TEST(TextFormat, RandomValuesAsTheSerializerWritesThem) {
  std::mt19937_64 random(20261128);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = random();
    const double values[] = {
        static_cast<double>(bits >> (bits % 64)),
        static_cast<double>(bits % 1000000) / 1e6,
        std::bit_cast<double>(bits),
    };
    for (double v : values) ASSERT_EQ(DirectLine(v, ""), SerializerLine(v, "")) << v;
  }
}

TEST(TextFormat, LabelValuesEscapedAsTheSerializerDoes) {
  for (const std::string value : {"", "ens1f0np0", "a\"b", "back\\slash", "two\nlines", "\\\"\n\\n",
                                  "trailing\\", "tab\there", "utf-8 \xc3\xa9"}) {
    EXPECT_EQ(DirectLine(1, value), SerializerLine(1, value)) << value;
  }
}

// A label value that is not UTF-8 would make Prometheus reject the whole scrape: the writer
// replaces each ill-formed subsequence with U+FFFD and still escapes what the format escapes.
TEST(TextFormat, LabelValuesAreAlwaysValidUtf8) {
  const std::string r = "\xef\xbf\xbd";
  const std::pair<std::string, std::string> cases[] = {
      {"leaf\xff"
       "01",
       "leaf" + r + "01"},                                       // the byte 0xff from a switch
      {"\xc0\xaf", r + r},                                       // overlong '/'
      {"\xe0\x80\xaf", r + r + r},                               // overlong, 3 bytes
      {"\xed\xa0\x80", r + r + r},                               // surrogate U+D800
      {"\xf4\x90\x80\x80", r + r + r + r},                       // above U+10FFFF
      {"port \xe2\x82", "port " + r},                            // truncated at the end
      {"\xe2\x82\"q", r + "\\\"q"},                              // truncated by an escaped quote
      {"a\\\xff\n\"\xc3\xa9", "a\\\\" + r + "\\n\\\"\xc3\xa9"},  // escapes around it
      {"caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80"},  // well-formed: unchanged
  };
  for (const auto& [in, want] : cases) {
    std::string out;
    AppendLabelValue(out, in);
    EXPECT_EQ(out, want) << testing::PrintToString(in);
  }
}

TEST(TextFormat, HelpTextEscapesBackslashAndNewlineAndIsValidUtf8) {
  std::string out;
  AppendHelpText(out, "a \"b\" c\\d\ne\xff");
  EXPECT_EQ(out, "a \"b\" c\\\\d\\ne\xef\xbf\xbd");
  out.clear();
  AppendHelpText(out, "Plain ASCII help, as every table row has.");
  EXPECT_EQ(out, "Plain ASCII help, as every table row has.");
}

}  // namespace
}  // namespace roceqos
