#include "base/duration.h"

#include <gtest/gtest.h>

namespace roceqos {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(ParseDuration, AcceptsPrometheusStyleDurations) {
  EXPECT_EQ(ParseDuration("250ms").value(), milliseconds(250));
  EXPECT_EQ(ParseDuration("5s").value(), seconds(5));
  EXPECT_EQ(ParseDuration("1m").value(), minutes(1));
  EXPECT_EQ(ParseDuration("1m30s").value(), seconds(90));
  EXPECT_EQ(ParseDuration("1h2m3s4ms").value(),
            hours(1) + minutes(2) + seconds(3) + milliseconds(4));
  EXPECT_EQ(ParseDuration("2d").value(), hours(48));
  EXPECT_EQ(ParseDuration("1w").value(), hours(24 * 7));
  EXPECT_EQ(ParseDuration("0").value(), milliseconds(0));
}

TEST(ParseDuration, RejectsMalformedDurationsNamingTheInput) {
  for (const char* bad : {"", "5", "5x", "s", "ms", "1s1m", "1s1s", "-1s", "1.5s", " 5s", "5s ",
                          "5S", "99999999999999999999s", "9999999999999y"}) {
    Result<std::chrono::nanoseconds> r = ParseDuration(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find(std::string("\"") + bad + "\""), std::string::npos)
        << r.error().message;
  }
}

TEST(FormatDuration, RoundTripsThroughParse) {
  for (const char* text : {"250ms", "5s", "1m", "1m30s", "1h", "2d3h", "10ms"}) {
    EXPECT_EQ(FormatDuration(ParseDuration(text).value()), text);
  }
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1s500ms");
}

}  // namespace
}  // namespace roceqos
