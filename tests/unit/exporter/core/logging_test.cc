#include "exporter/core/logging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/details/log_msg.h>
#include <spdlog/spdlog.h>

#include <limits>
#include <regex>

#include "base/log_event.h"

namespace roceqos {
namespace {

std::string Format(std::string_view format, spdlog::level::level_enum level,
                   std::string_view payload) {
  spdlog::details::log_msg msg("test", level,
                               spdlog::string_view_t(payload.data(), payload.size()));
  msg.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123));
  spdlog::memory_buf_t buf;
  MakeLogFormatter(format)->format(msg, buf);
  return std::string(buf.data(), buf.size());
}

TEST(LogFormat, LogfmtIsOneLineWithEscapedMessage) {
  EXPECT_EQ(Format("logfmt", spdlog::level::warn, "ethtool eth0: \"bad\"\nreply \\ x"),
            "ts=2023-11-14T22:13:20.123Z level=warn msg=\"ethtool eth0: \\\"bad\\\"\\nreply "
            "\\\\ x\"\n");
  EXPECT_THAT(Format("logfmt", spdlog::level::err, "x"), ::testing::HasSubstr(" level=error "));
  EXPECT_THAT(Format("logfmt", spdlog::level::debug, "x"), ::testing::HasSubstr(" level=debug "));
}

TEST(LogFormat, JsonIsOneObjectPerLine) {
  EXPECT_EQ(Format("json", spdlog::level::info, "a\"b\x01"),
            "{\"ts\":\"2023-11-14T22:13:20.123Z\",\"level\":\"info\",\"msg\":\"a\\\"b\\u0001\"}\n");
}

TEST(LogFormat, StructuredFieldsBecomeLogfmtPairs) {
  const std::string payload = EncodeLogRecord("qos field drift started", {{"netdev", "ens1f0np0"},
                                                                          {"field", "pfc"},
                                                                          {"expected", "[3]"},
                                                                          {"actual", "[3 4]"},
                                                                          {"errno", 19},
                                                                          {"empty", ""}});
  EXPECT_EQ(Format("logfmt", spdlog::level::warn, payload),
            "ts=2023-11-14T22:13:20.123Z level=warn msg=\"qos field drift started\" "
            "netdev=ens1f0np0 field=pfc expected=[3] actual=\"[3 4]\" errno=19 empty=\"\"\n");
}

TEST(LogFormat, StructuredFieldsBecomeJsonMembers) {
  const std::string payload = EncodeLogRecord("selected device", {{"netdev", "a\"b"}, {"n", 2}});
  EXPECT_EQ(Format("json", spdlog::level::info, payload),
            "{\"ts\":\"2023-11-14T22:13:20.123Z\",\"level\":\"info\",\"msg\":\"selected device\","
            "\"netdev\":\"a\\\"b\",\"n\":2}\n");
}

// Numbers and booleans are JSON numbers and booleans; text that looks like one stays a string,
// and a value with no JSON number (inf, nan) is text.
TEST(LogFormat, JsonNumbersAndBooleansAreNotStrings) {
  const size_t rules = 1;
  const std::string payload =
      EncodeLogRecord("QoS policy loaded", {{"device_rules", rules},
                                            {"errno", -19},
                                            {"ratio", 0.25},
                                            {"enforce", true},
                                            {"held", false},
                                            {"period", std::numeric_limits<double>::infinity()},
                                            {"text", "1"},
                                            {"letter", 'x'}});
  EXPECT_EQ(Format("json", spdlog::level::info, payload),
            "{\"ts\":\"2023-11-14T22:13:20.123Z\",\"level\":\"info\",\"msg\":\"QoS policy loaded\","
            "\"device_rules\":1,\"errno\":-19,\"ratio\":0.25,\"enforce\":true,\"held\":false,"
            "\"period\":\"inf\",\"text\":\"1\",\"letter\":\"x\"}\n");
  EXPECT_THAT(Format("logfmt", spdlog::level::info, payload),
              ::testing::HasSubstr(" device_rules=1 errno=-19 ratio=0.25 enforce=true held=false "
                                   "period=inf text=1 letter=x\n"));
}

// A JSON document must be UTF-8: bytes that are not (a switch's system name, a netdev name) are
// written as U+FFFD in both formats, quoted or bare.
TEST(LogFormat, IllFormedUtf8BecomesReplacementCharacters) {
  const std::string payload = EncodeLogRecord(
      "neighbour \xff", {{"system_name", "leaf\xc0\xaf"}, {"port", "a b\xed\xa0\x80"}});
  EXPECT_EQ(
      Format("json", spdlog::level::info, payload),
      "{\"ts\":\"2023-11-14T22:13:20.123Z\",\"level\":\"info\",\"msg\":\"neighbour \xef\xbf\xbd\","
      "\"system_name\":\"leaf\xef\xbf\xbd\xef\xbf\xbd\",\"port\":\"a "
      "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}\n");
  EXPECT_THAT(Format("logfmt", spdlog::level::info, payload),
              ::testing::HasSubstr(" system_name=leaf\xef\xbf\xbd\xef\xbf\xbd port=\"a "
                                   "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"\n"));
  EXPECT_THAT(Format("logfmt", spdlog::level::info, "caf\xc3\xa9"),
              ::testing::HasSubstr("msg=\"caf\xc3\xa9\""));
}

TEST(LogFormat, SeparatorsInsideValuesCannotForgeFields) {
  const std::string payload = EncodeLogRecord(
      "m\x1e"
      "x\x1fy",
      {{"k",
        "v\x1e"
        "evil\x1f"
        "1"}});
  const DecodedLogRecord record = DecodeLogRecord(payload);
  EXPECT_EQ(record.msg, "m?x?y");
  ASSERT_EQ(record.fields.size(), 1u);
  EXPECT_EQ(record.fields[0].key, "k");
  EXPECT_EQ(record.fields[0].value, "v?evil?1");
}

TEST(SetupLogging, RejectsUnknownLevelsAndFormats) {
  EXPECT_FALSE(SetupLogging("verbose", "logfmt").ok());
  EXPECT_FALSE(SetupLogging("info", "xml").ok());
  ASSERT_TRUE(SetupLogging("warn", "json").ok());
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::warn);
  ASSERT_TRUE(SetupLogging("info", "logfmt").ok());
}

}  // namespace
}  // namespace roceqos
