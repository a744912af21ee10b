// --attribution.* (exporter/app/cli.cc): the attribution poller is off unless asked for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exporter/app/cli.h"
#include "tests/unit/support/parsed_command_line.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;

TEST(CliAttribution, OffByDefaultWithHostPaths) {
  Parsed p = Parse({});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.attribution_interval.count(), 0);
  EXPECT_EQ(p.outcome.config.attribution_proc_root, "/proc");
  EXPECT_EQ(p.outcome.config.attribution_pod_logs_root, "/var/log/pods");
}

TEST(CliAttribution, IntervalAndRoots) {
  Parsed p = Parse({"--attribution.interval=15s", "--attribution.proc-root=/host/proc",
                    "--attribution.pod-logs-root=/host/var/log/pods"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.attribution_interval, std::chrono::seconds(15));
  EXPECT_EQ(p.outcome.config.attribution_proc_root, "/host/proc");
  EXPECT_EQ(p.outcome.config.attribution_pod_logs_root, "/host/var/log/pods");
}

TEST(CliAttribution, RefusesOutOfRangeAndRelativePaths) {
  for (const char* bad : {"--attribution.interval=100ms", "--attribution.interval=soon",
                          "--attribution.proc-root=proc", "--attribution.pod-logs-root="}) {
    Parsed p = Parse({bad});
    EXPECT_EQ(p.outcome.kind, CliOutcome::Kind::kExit) << bad;
    EXPECT_EQ(p.outcome.exit_code, kExitUsage) << bad;
    EXPECT_THAT(p.err, HasSubstr("--attribution.")) << bad;
  }
}

}  // namespace
}  // namespace roceqos
