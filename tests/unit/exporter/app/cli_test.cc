#include "exporter/app/cli.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/duration.h"
#include "exporter/render/metrics_doc.h"
#include "tests/unit/support/parsed_command_line.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A usage error: exit code 2 and exactly one line on stderr that names the program.
void ExpectUsageError(const Parsed& p, const std::string& mentions) {
  EXPECT_EQ(p.outcome.kind, CliOutcome::Kind::kExit);
  EXPECT_EQ(p.outcome.exit_code, kExitUsage);
  EXPECT_THAT(p.err, StartsWith("roce_qos_exporter: "));
  EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
  EXPECT_THAT(p.err, HasSubstr(mentions));
  EXPECT_TRUE(p.out.empty());
}

TEST(Cli, ZeroConfigurationRunsWithDefaults) {
  Parsed p = Parse({});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  const Config& c = p.outcome.config;
  EXPECT_EQ(c.listen_address, ":9879");
  EXPECT_EQ(c.telemetry_path, "/metrics");
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.log_format, "logfmt");
  EXPECT_EQ(c.sampler_period, std::chrono::milliseconds(250));
  EXPECT_EQ(c.sampler_budget, 0.5);
  EXPECT_FALSE(c.device_include.has_value());
  EXPECT_FALSE(c.raw_include.has_value());
  EXPECT_TRUE(c.config_path.empty());
}

TEST(Cli, AcceptsEveryFlagInBothSyntaxes) {
  Parsed p =
      Parse({"--web.listen-address=127.0.0.1:9100", "--web.telemetry-path", "/m",
             "--log.level=debug", "--log.format=json", "--collector.device-include=^veth.*",
             "--collector.device-exclude", "lo", "--collector.ethtool.raw-include=rx_.*",
             "--sampler.period=1s", "--sampler.budget", "0.25", "--sampler.discovery-interval=1m"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  const Config& c = p.outcome.config;
  EXPECT_EQ(c.listen_address, "127.0.0.1:9100");
  EXPECT_EQ(c.telemetry_path, "/m");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.log_format, "json");
  EXPECT_EQ(c.device_include, "^veth.*");
  EXPECT_EQ(c.device_exclude, "lo");
  EXPECT_EQ(c.raw_include, "rx_.*");
  EXPECT_EQ(c.sampler_period, std::chrono::seconds(1));
  EXPECT_EQ(c.sampler_budget, 0.25);
  EXPECT_EQ(c.discovery_interval, std::chrono::minutes(1));
}

TEST(Cli, HelpAndVersionPrintToStdoutAndExitZero) {
  Parsed help = Parse({"--help"});
  EXPECT_EQ(help.outcome.kind, CliOutcome::Kind::kExit);
  EXPECT_EQ(help.outcome.exit_code, 0);
  for (const char* flag : {"--web.listen-address", "--web.telemetry-path", "--log.level",
                           "--log.format", "--collector.device-include",
                           "--collector.device-exclude", "--collector.ethtool.raw-include",
                           "--sampler.period", "--sampler.budget", "--config", "check", "policy"}) {
    EXPECT_THAT(help.out, HasSubstr(flag));
  }
  Parsed version = Parse({"--version"});
  EXPECT_EQ(version.outcome.kind, CliOutcome::Kind::kExit);
  EXPECT_EQ(version.outcome.exit_code, 0);
  EXPECT_THAT(version.out, StartsWith("roce_qos_exporter version "));
}

TEST(Cli, UnknownFlagIsAUsageError) {
  ExpectUsageError(Parse({"--web.listen-adress=:1"}), "--web.listen-adress");
  ExpectUsageError(Parse({"stray"}), "stray");
}

TEST(Cli, BadDurationsAreUsageErrors) {
  ExpectUsageError(Parse({"--sampler.period=5x"}), "\"5x\"");
  ExpectUsageError(Parse({"--sampler.period=250"}), "--sampler.period");
  ExpectUsageError(Parse({"--sampler.period=1ms"}), "between 10ms and 1h");
  ExpectUsageError(Parse({"--sampler.period=2h"}), "between 10ms and 1h");
  ExpectUsageError(Parse({"--sampler.discovery-interval=100ms"}), "--sampler.discovery-interval");
  // Longer than 16 x the period: no snapshot within the health and watchdog window.
  ExpectUsageError(Parse({"--sampler.idle-period=5s"}),
                   "--sampler.idle-period 5s is longer than the longest sampler period 4s");
  Parsed slower = Parse({"--sampler.period=1s", "--sampler.idle-period=5s"});
  EXPECT_EQ(slower.outcome.kind, CliOutcome::Kind::kRunExporter) << slower.err;
}

TEST(Cli, BadRegexesAreUsageErrors) {
  ExpectUsageError(Parse({"--collector.device-include=("}), "--collector.device-include");
  ExpectUsageError(Parse({"--collector.device-exclude=[a"}), "--collector.device-exclude");
  ExpectUsageError(Parse({"--collector.ethtool.raw-include=*x"}),
                   "--collector.ethtool.raw-include");
}

TEST(Cli, BadValuesAreUsageErrors) {
  ExpectUsageError(Parse({"--sampler.budget=0"}), "--sampler.budget");
  ExpectUsageError(Parse({"--sampler.budget=1.5"}), "--sampler.budget");
  ExpectUsageError(Parse({"--sampler.budget=half"}), "--sampler.budget");
  ExpectUsageError(Parse({"--log.level=verbose"}), "--log.level");
  ExpectUsageError(Parse({"--log.format=xml"}), "--log.format");
  ExpectUsageError(Parse({"--remediation=always"}), "--remediation");
  ExpectUsageError(Parse({"--web.listen-address=[fe80::1%eth0]:9879"}), "IPv6");
  EXPECT_EQ(Parse({"--web.listen-address=[::1]:9879"}).outcome.kind,
            CliOutcome::Kind::kRunExporter);
  EXPECT_EQ(Parse({"--web.listen-address=[::]:9879"}).outcome.kind, CliOutcome::Kind::kRunExporter);
  ExpectUsageError(Parse({"--web.listen-address=9879"}), "[host]:port");
  ExpectUsageError(Parse({"--web.listen-address=:99999"}), "port");
  ExpectUsageError(Parse({"--web.listen-address=example.org:80"}), "IPv4");
  ExpectUsageError(Parse({"--web.telemetry-path=metrics"}), "--web.telemetry-path");
  ExpectUsageError(Parse({"--web.telemetry-path=/-/healthy"}), "--web.telemetry-path");
  ExpectUsageError(Parse({"--config=/nonexistent/policy.yaml"}), "/nonexistent/policy.yaml");
  ExpectUsageError(Parse({"--config=/tmp"}),
                   "--config \"/tmp\": is a directory, not a policy file");
  ExpectUsageError(Parse({"--config=/nonexistent/policy.yaml"}), "no such file");
  ExpectUsageError(Parse({"--collector.device-include=*"}),
                   "--collector.device-include: invalid regex \"*\": ");
  ExpectUsageError(Parse({"--collector.device-include=*"}), "(to match anything, write .*)");
  ExpectUsageError(Parse({"--collector.device-exclude=ens["}),
                   "--collector.device-exclude: invalid regex \"ens[\": an unbalanced [ or ]");
}

TEST(Cli, ConfigPathOfAnExistingFileIsStored) {
  char path[] = "/tmp/roceqos_cli_test_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  Parsed p = Parse({"--config", path});
  EXPECT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.config_path, path);
  std::remove(path);
}

TEST(Cli, SubcommandsParseWithGlobalFlags) {
  char path[] = "/tmp/roceqos_cli_check_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string rule = "devices:\n  - {name: loopback, match: {netdev: lo}}\n";
  ASSERT_EQ(write(fd, rule.data(), rule.size()), static_cast<ssize_t>(rule.size()));
  close(fd);
  Parsed check = Parse({"check", "--sampler.period=1s", "--config", path, "--netdev", "lo"});
  ASSERT_EQ(check.outcome.kind, CliOutcome::Kind::kSubcommand) << check.err;
  EXPECT_EQ(check.outcome.config.sampler_period, std::chrono::seconds(1));
  std::ostringstream out, err;
  // Loopback has no DCB: the rule's DCB fields cannot be verified there, which is not drift.
  const int status = check.outcome.subcommand(check.outcome.config, out, err);
  std::remove(path);
  EXPECT_THAT(out.str(), HasSubstr("lo ("));
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("\n  trust +UNVERIFIED expected dscp\n"));
  EXPECT_THAT(out.str(), HasSubstr("cannot be verified on this device"));
  // Only tcp_ecn (host-wide, readable here) can differ; the unverifiable DCB fields never count.
  std::ifstream tcp_ecn("/proc/sys/net/ipv4/tcp_ecn");
  int host_tcp_ecn = -1;
  tcp_ecn >> host_tcp_ecn;
  if (host_tcp_ecn == 1) {
    EXPECT_EQ(status, 0) << out.str() << err.str();
  } else {
    EXPECT_EQ(status, 1) << out.str() << err.str();
    EXPECT_THAT(out.str(), HasSubstr("DRIFT in 1 of "));
  }

  Parsed show = Parse({"policy", "show-default"});
  ASSERT_EQ(show.outcome.kind, CliOutcome::Kind::kSubcommand) << show.err;
  std::ostringstream yaml, none;
  EXPECT_EQ(show.outcome.subcommand(show.outcome.config, yaml, none), 0);
  EXPECT_THAT(yaml.str(), HasSubstr("pfc: [3]"));
  ExpectUsageError(Parse({"policy"}), "roce_qos_exporter: ");
  ExpectUsageError(Parse({"policy", "bogus"}), "subcommand");
  // A typo names the word it did not know, not only that a subcommand is required.
  ExpectUsageError(Parse({"policy", "show-defaults"}),
                   "policy: unknown subcommand \"show-defaults\" (known: show-default, validate)");
  ExpectUsageError(Parse({"policy"}),
                   "policy: a subcommand is required (known: show-default, validate)");
}

// A one-shot subcommand logs warnings and errors only, unless --log.level says otherwise; the
// daemon keeps info.
TEST(Cli, SubcommandsLogWarningsUnlessTheLevelIsGiven) {
  EXPECT_EQ(Parse({}).outcome.config.log_level, "info");
  EXPECT_EQ(Parse({"check"}).outcome.config.log_level, "warn");
  EXPECT_EQ(Parse({"policy", "show-default"}).outcome.config.log_level, "warn");
  EXPECT_EQ(Parse({"--log.level=info", "check"}).outcome.config.log_level, "info");
  EXPECT_EQ(Parse({"check", "--log.level=debug"}).outcome.config.log_level, "debug");
}

TEST(Cli, QosFlags) {
  Parsed p = Parse({"--qos.poll-interval=2s", "--qos.configfs-tos"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.qos_poll_interval, std::chrono::seconds(2));
  EXPECT_TRUE(p.outcome.config.qos_configfs_tos);
  EXPECT_EQ(Parse({}).outcome.config.qos_poll_interval, std::chrono::seconds(5));
  ExpectUsageError(Parse({"--qos.poll-interval=10ms"}), "--qos.poll-interval");
  ExpectUsageError(Parse({"--qos.poll-interval=soon"}), "--qos.poll-interval");
  EXPECT_EQ(Parse({}).outcome.config.qos_dcqcn_poll_interval, std::chrono::seconds(30));
  EXPECT_EQ(Parse({"--qos.dcqcn-poll-interval=5s"}).outcome.config.qos_dcqcn_poll_interval,
            std::chrono::seconds(5));
  ExpectUsageError(Parse({"--qos.dcqcn-poll-interval=2h"}), "--qos.dcqcn-poll-interval");
}

// Each poller's interval and the GID check's: its bounds hold, 0 turns it off, and an error names
// the flag and its range.
TEST(Cli, EveryPollerIntervalIsCheckedAgainstItsRange) {
  struct IntervalFlag {
    std::string flag;
    std::chrono::nanoseconds Config::*field;
    std::string min, below_min, max, above_max;
  };
  const IntervalFlag flags[] = {
      {"--transceiver.interval", &Config::transceiver_interval, "1s", "999ms", "1d", "25h"},
      {"--lldp.interval", &Config::lldp_interval, "1s", "999ms", "1h", "61m"},
      {"--link.interval", &Config::link_interval, "1s", "999ms", "1h", "61m"},
      {"--pcie.interval", &Config::pcie_interval, "1s", "999ms", "1d", "25h"},
      {"--attribution.interval", &Config::attribution_interval, "1s", "999ms", "1d", "25h"},
      {"--gids.interval", &Config::gids_interval, "10s", "9s", "1d", "25h"},
  };
  for (const IntervalFlag& f : flags) {
    SCOPED_TRACE(f.flag);
    for (const std::string& good : {f.min, f.max, std::string("0s")}) {
      const std::string arg = f.flag + "=" + good;
      Parsed p = Parse({arg.c_str()});
      ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
      EXPECT_EQ(p.outcome.config.*f.field, *ParseDuration(good)) << good;
    }
    for (const std::string& bad : {f.below_min, f.above_max}) {
      const std::string arg = f.flag + "=" + bad;
      const std::string range = "must be 0 (off) or between " + f.min + " and " + f.max;
      ExpectUsageError(Parse({arg.c_str()}), f.flag + " \"" + bad + "\" " + range);
    }
  }
}

// One flag missed in a rollout must not write the embedded default to a fabric: enforce needs an
// explicit --config; observe and dry-run may still use the default.
TEST(Cli, EnforceWithoutConfigIsRefused) {
  ExpectUsageError(Parse({"--remediation=enforce"}), "--remediation=enforce needs --config");
  ExpectUsageError(Parse({"--remediation", "enforce", "check"}), "policy show-default");
  EXPECT_EQ(Parse({"--remediation=dry-run"}).outcome.kind, CliOutcome::Kind::kRunExporter);
  EXPECT_EQ(Parse({}).outcome.kind, CliOutcome::Kind::kRunExporter);
  char path[] = "/tmp/roceqos_cli_enforce_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  Parsed p = Parse({"--remediation=enforce", "--config", path});
  std::remove(path);
  EXPECT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.remediation, RemediationMode::kEnforce);
}

TEST(Cli, RemediationTuningFlags) {
  Parsed p = Parse({"--remediation=dry-run", "--remediation.backoff=2s",
                    "--remediation.max-backoff=1m", "--remediation.max-attempts=3"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.remediation_backoff, std::chrono::seconds(2));
  EXPECT_EQ(p.outcome.config.remediation_max_backoff, std::chrono::seconds(60));
  EXPECT_EQ(p.outcome.config.remediation_max_attempts, 3);
  ExpectUsageError(Parse({"--remediation.backoff=11m"}), "--remediation.backoff");
  ExpectUsageError(Parse({"--remediation.backoff=500ms"}), "--remediation.backoff");
  ExpectUsageError(Parse({"--remediation.max-attempts=0"}), "--remediation.max-attempts");
}

// A wait that would overflow the clock arithmetic is refused at the command line, with the bound.
TEST(Cli, RemediationBackoffsAreBoundedToAWeek) {
  Parsed week = Parse(
      {"--remediation=dry-run", "--remediation.backoff=168h", "--remediation.max-backoff=168h"});
  ASSERT_EQ(week.outcome.kind, CliOutcome::Kind::kRunExporter) << week.err;
  EXPECT_EQ(week.outcome.config.remediation_max_backoff, kMaxRemediationBackoff);
  ExpectUsageError(Parse({"--remediation.max-backoff=169h"}), "--remediation.max-backoff");
  ExpectUsageError(Parse({"--remediation.max-backoff=2562047h"}), "--remediation.max-backoff");
  ExpectUsageError(Parse({"--remediation.max-backoff=2562047h", "--remediation.backoff=2562047h"}),
                   "--remediation.backoff");
  Parsed huge = Parse({"--remediation.max-backoff=100000h"});
  EXPECT_NE(huge.err.find("and 1w"), std::string::npos) << huge.err;
}

TEST(Cli, PrintsTheMetricsDoc) {
  Parsed p = Parse({"--print-metrics-doc"});
  EXPECT_EQ(p.outcome.kind, CliOutcome::Kind::kExit);
  EXPECT_EQ(p.outcome.exit_code, 0);
  EXPECT_EQ(p.out, GenerateMetricsDoc());
}

TEST(Cli, WebServingFlags) {
  Parsed defaults = Parse({});
  EXPECT_FALSE(defaults.outcome.config.enable_lifecycle) << "POST /-/reload is off by default";
  EXPECT_EQ(defaults.outcome.config.max_requests, 40);
  EXPECT_EQ(defaults.outcome.config.max_connections, 256);
  Parsed p = Parse({"--web.enable-lifecycle", "--web.max-requests=0", "--web.max-connections=64"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_TRUE(p.outcome.config.enable_lifecycle);
  EXPECT_EQ(p.outcome.config.max_requests, 0);
  EXPECT_EQ(p.outcome.config.max_connections, 64);
}

TEST(Cli, HealthMaxSampleAgeDefaultsFromThePeriodAndIsChecked) {
  using std::chrono::seconds;
  EXPECT_EQ(Parse({}).outcome.config.health_max_sample_age, seconds(30));
  // Without the flag the bound follows --sampler.period (health.h): 32 periods, at least 30s.
  EXPECT_EQ(Parse({"--sampler.period=5s"}).outcome.config.health_max_sample_age, seconds(160));
  Parsed p = Parse({"--web.health-max-sample-age=2m"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.health_max_sample_age, std::chrono::minutes(2));
  ExpectUsageError(Parse({"--web.health-max-sample-age=soon"}), "--web.health-max-sample-age");
  ExpectUsageError(Parse({"--web.health-max-sample-age=500ms"}), "at least 1s");
  ExpectUsageError(Parse({"--sampler.period=10s", "--sampler.discovery-interval=1m",
                          "--web.health-max-sample-age=15s"}),
                   "twice --sampler.period");
  EXPECT_THAT(Parse({"--help"}).out, HasSubstr("--web.health-max-sample-age"));
}

TEST(Cli, ProcfsPath) {
  EXPECT_EQ(Parse({}).outcome.config.procfs_path, "/proc");
  Parsed p = Parse({"--path.procfs=/host/proc"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.procfs_path, "/host/proc");
  ExpectUsageError(Parse({"--path.procfs=host/proc"}), "--path.procfs");
}

// Debugfs is opt-in: root-only and not a stable ABI (docs/decisions.md).
TEST(Cli, DebugfsPathIsOptIn) {
  EXPECT_EQ(Parse({}).outcome.config.debugfs_path, "");
  Parsed p = Parse({"--path.debugfs=/sys/kernel/debug"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.debugfs_path, "/sys/kernel/debug");
  ExpectUsageError(Parse({"--path.debugfs=sys/kernel/debug"}), "--path.debugfs");
}

// The kubelet is asked only when its socket is named (docs/kubelet.md).
TEST(Cli, KubeletSocketIsOptIn) {
  EXPECT_EQ(Parse({}).outcome.config.attribution_kubelet_socket, "");
  Parsed p = Parse({"--attribution.kubelet-socket=/var/lib/kubelet/pod-resources/kubelet.sock"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_EQ(p.outcome.config.attribution_kubelet_socket,
            "/var/lib/kubelet/pod-resources/kubelet.sock");
  ExpectUsageError(Parse({"--attribution.kubelet-socket=kubelet.sock"}),
                   "--attribution.kubelet-socket");
  const std::string too_long = "--attribution.kubelet-socket=/" + std::string(107, 'k');
  ExpectUsageError(Parse({too_long.c_str()}), "at most 107 bytes");
}

TEST(Cli, WebServingFlagsOutOfRangeAreUsageErrors) {
  ExpectUsageError(Parse({"--web.max-requests=-1"}), "--web.max-requests");
  ExpectUsageError(Parse({"--web.max-connections=2"}), "--web.max-connections");
  ExpectUsageError(Parse({"--web.max-connections=100000"}), "--web.max-connections");
  ExpectUsageError(Parse({"--web.max-connections=many"}), "--web.max-connections");
}

// The full NIC x GPU matrix unless a site's budget asks for less (docs/gpus.md).
TEST(Cli, GpuTopologyNearestOnlyIsOptIn) {
  EXPECT_FALSE(Parse({}).outcome.config.gpu_nearest_only);
  Parsed p = Parse({"--gpu-topology.nearest-only"});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kRunExporter) << p.err;
  EXPECT_TRUE(p.outcome.config.gpu_nearest_only);
}

}  // namespace
}  // namespace roceqos
