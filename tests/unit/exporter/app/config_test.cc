#include "exporter/app/config.h"

#include <gtest/gtest.h>

namespace roceqos {
namespace {

TEST(MakeSamplerOptions, CompilesRegexesAndCopiesTimings) {
  Config c;
  c.device_include = "veth.*";
  c.sampler_period = std::chrono::milliseconds(500);
  c.sampler_budget = 0.3;
  Result<SamplerOptions> o = MakeSamplerOptions(c);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->device_include.has_value());
  EXPECT_FALSE(o->device_exclude.has_value());
  EXPECT_EQ(o->period, std::chrono::milliseconds(500));
  EXPECT_EQ(o->budget, 0.3);
  c.raw_include = "(";
  EXPECT_FALSE(MakeSamplerOptions(c).ok());
}

TEST(ConfigWarnings, DeriveWindowsWithoutTheShippedRulesWindowAreFlagged) {
  Config c;
  EXPECT_TRUE(ConfigWarnings(c).empty()) << "the default windows include 1m";
  c.derive.windows = {std::chrono::seconds(30), std::chrono::seconds(120)};
  const std::vector<std::string> warnings = ConfigWarnings(c);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("--derive.windows has no 1m window"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("RoceQosPfcPausedRatioHigh"), std::string::npos) << warnings[0];
  c.derive.windows = {std::chrono::seconds(60), std::chrono::seconds(300)};
  EXPECT_TRUE(ConfigWarnings(c).empty());
}

}  // namespace
}  // namespace roceqos
