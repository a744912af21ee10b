#include "exporter/app/config.h"

#include <gtest/gtest.h>

namespace roceqos {
namespace {

TEST(CivetListeningPorts, TranslatesListenAddresses) {
  EXPECT_EQ(CivetListeningPorts(":9879").value(), "9879");
  EXPECT_EQ(CivetListeningPorts("127.0.0.1:9879").value(), "127.0.0.1:9879");
  EXPECT_EQ(CivetListeningPorts("localhost:0").value(), "127.0.0.1:0");
  EXPECT_EQ(CivetListeningPorts("0.0.0.0:80").value(), "0.0.0.0:80");
}

TEST(CivetListeningPorts, RejectsWhatCivetwebCannotServe) {
  for (const char* bad : {"", "9879", ":", ":x", ":65536", "[::1]:9879", "host.example:80",
                          "1.2.3:80", "127.0.0.1:80s"}) {
    EXPECT_FALSE(CivetListeningPorts(bad).ok()) << bad;
  }
}

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

}  // namespace
}  // namespace roceqos
