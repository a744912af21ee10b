#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <optional>

#include "base/duration.h"
#include "exporter/app/flag_text.h"
#include "exporter/http/health.h"
#include "exporter/http/listen_address.h"
#include "exporter/sampling/sampler.h"
#include "exporter/signals/derive.h"

namespace roceqos {
namespace {

using namespace std::chrono_literals;

Result<void> Invalid(std::string message) { return MakeError(EINVAL, std::move(message)); }

// A duration flag's text, parsed; the error names the flag. Every duration flag goes through it.
Result<std::chrono::nanoseconds> ParseDurationFlag(std::string_view flag, const std::string& text) {
  auto parsed = ParseDuration(text);
  if (!parsed) return MakeError(EINVAL, fmt::format("{}: {}", flag, parsed.error().message));
  return *parsed;
}

// A duration flag checked against [min, max] (or 0 when `zero_is_off`), with one message shape
// for every flag whose range is fixed.
struct DurationRange {
  std::chrono::nanoseconds min, max;
  bool zero_is_off = false;
};
Result<std::chrono::nanoseconds> ParseDurationFlagInRange(std::string_view flag,
                                                          const std::string& text,
                                                          DurationRange range) {
  auto parsed = ParseDurationFlag(flag, text);
  if (!parsed) return parsed;
  if (range.zero_is_off && parsed->count() == 0) return *parsed;
  if (*parsed < range.min || *parsed > range.max) {
    return MakeError(EINVAL, fmt::format("{} \"{}\" must be {}between {} and {}", flag, text,
                                         range.zero_is_off ? "0 (off) or " : "",
                                         FormatDuration(range.min), FormatDuration(range.max)));
  }
  return *parsed;
}

// One fixed-range duration flag: its name, its text and the Config field it sets.
struct DurationFlag {
  std::string_view flag;
  const std::string& text;
  std::chrono::nanoseconds& out;
  DurationRange range;
};

// Each flag parsed into its field in order; the first error is returned and leaves that field
// and the later ones untouched.
Result<void> SetDurationFlags(std::initializer_list<DurationFlag> flags) {
  for (const DurationFlag& f : flags) {
    auto parsed = ParseDurationFlagInRange(f.flag, f.text, f.range);
    if (!parsed) return parsed.error();
    f.out = *parsed;
  }
  return {};
}

Result<void> ValidateSampler(Config& config, const FlagText& text) {
  if (auto set =
          SetDurationFlags({{"--sampler.period", text.period, config.sampler_period, {10ms, 1h}}});
      !set)
    return set;

  auto parsed_discovery = ParseDurationFlag("--sampler.discovery-interval", text.discovery);
  if (!parsed_discovery) return parsed_discovery.error();
  if (*parsed_discovery < config.sampler_period) {
    return Invalid(
        fmt::format("--sampler.discovery-interval \"{}\" must not be shorter than --sampler.period",
                    text.discovery));
  }
  config.discovery_interval = *parsed_discovery;
  if (!(config.sampler_budget > 0 && config.sampler_budget <= 1)) {
    return Invalid(fmt::format("--sampler.budget {} must be in (0, 1], a share of the period",
                               config.sampler_budget));
  }
  return {};
}

// The per-port schedule (exporter/sampling/port_scheduler.h).
Result<void> ValidateSchedule(Config& config, const FlagText& text) {
  if (auto set = SetDurationFlags({{"--sampler.idle-period",
                                    text.idle_period,
                                    config.sampler_idle_period,
                                    {10ms, 1h, true}}});
      !set)
    return set;
  // Health (--web.health-max-sample-age) and the systemd watchdog need a snapshot at least once
  // per longest sampler period, and the schedule publishes one only when a port is due.
  const auto longest = kDefaultMaxPeriodFactor * config.sampler_period;
  if (config.sampler_idle_period > longest) {
    return Invalid(
        fmt::format("--sampler.idle-period {} is longer than the longest sampler period {} ({} x "
                    "--sampler.period): health and the watchdog need a sample at least that often",
                    FormatDuration(config.sampler_idle_period), FormatDuration(longest),
                    kDefaultMaxPeriodFactor));
  }
  if (!(config.sampler_duty_cycle > 0 && config.sampler_duty_cycle <= 1)) {
    return Invalid(fmt::format("--sampler.duty-cycle {} must be in (0, 1], a share of the time",
                               config.sampler_duty_cycle));
  }
  return {};
}

Result<void> ValidateQos(Config& config, const FlagText& text) {
  Result<RemediationMode> mode = ParseRemediationMode(text.remediation);
  if (!mode) return mode.error();  // unreachable past CLI11's check, kept for direct callers
  config.remediation = *mode;
  const DurationRange poll_range{100ms, 1h};
  if (auto set = SetDurationFlags(
          {{"--qos.poll-interval", text.qos_poll, config.qos_poll_interval, poll_range},
           {"--qos.dcqcn-poll-interval", text.qos_dcqcn_poll, config.qos_dcqcn_poll_interval,
            poll_range}});
      !set)
    return set;

  // Bounded so that every sum and doubling of them on the clock (saturating in remediate.cc as
  // well) stays far inside int64 nanoseconds; a week between attempts is already no remediation.
  const DurationRange backoff_range{1s, kMaxRemediationBackoff};
  auto parsed_backoff =
      ParseDurationFlagInRange("--remediation.backoff", text.backoff, backoff_range);
  if (!parsed_backoff) return parsed_backoff.error();
  auto parsed_max_backoff =
      ParseDurationFlagInRange("--remediation.max-backoff", text.max_backoff, backoff_range);
  if (!parsed_max_backoff) return parsed_max_backoff.error();
  if (*parsed_max_backoff < *parsed_backoff) {
    return Invalid(fmt::format(
        "--remediation.backoff \"{}\" must be at least 1s and at most --remediation.max-backoff",
        text.backoff));
  }
  config.remediation_backoff = std::chrono::duration_cast<std::chrono::seconds>(*parsed_backoff);
  config.remediation_max_backoff =
      std::chrono::duration_cast<std::chrono::seconds>(*parsed_max_backoff);
  if (config.remediation_max_attempts < 1) {
    return Invalid(fmt::format("--remediation.max-attempts {} must be at least 1",
                               config.remediation_max_attempts));
  }
  return {};
}

// The pollers' intervals and the GID check's. --transceiver.interval: at least 1s, since every
// module read is several firmware register accesses on mlx5 (docs/transceiver.md). --lldp.interval:
// lldpd answers from memory, but a neighbour changes at most once per LLDP transmit interval (30s
// by default).
Result<void> ValidatePollers(Config& config, const FlagText& text) {
  return SetDurationFlags(
      {{"--transceiver.interval",
        text.transceiver_interval,
        config.transceiver_interval,
        {1s, 24h, true}},
       {"--lldp.interval", text.lldp_interval, config.lldp_interval, {1s, 1h, true}},
       // --link.interval: each netdev's round is three firmware reads on mlx5 (PPCNT).
       {"--link.interval", text.link_interval, config.link_interval, {1s, 1h, true}},
       // --pcie.interval: sysfs, but a trained link and its AER totals change over minutes.
       {"--pcie.interval", text.pcie_interval, config.pcie_interval, {1s, 24h, true}},
       // --attribution.interval: one QP dump per RDMA device and a cgroup read per PID holding
       // QPs; owners change as jobs start and end, over minutes.
       {"--attribution.interval",
        text.attribution_interval,
        config.attribution_interval,
        {1s, 24h, true}},
       // --gids.interval: the GID check is a sample stage (exporter/sampling/gid_stage.h); a GID
       // follows its address within milliseconds, so checking more often than every 10s only
       // costs reads.
       {"--gids.interval", text.gids_interval, config.gids_interval, {10s, 24h, true}}});
}

Result<void> ValidateWeb(const Config& config) {
  const std::string& path = config.telemetry_path;
  if (path.size() < 2 || path.front() != '/' || path.rfind("/-/", 0) == 0 ||
      path.find_first_of(" ?#\t") != std::string::npos) {
    return Invalid(fmt::format(
        "--web.telemetry-path \"{}\" must start with / and not be / or under /-/", path));
  }
  if (config.max_requests < 0) {
    return Invalid(
        fmt::format("--web.max-requests {} must be 0 (no cap) or more", config.max_requests));
  }
  // Each open connection is a descriptor and up to 16 KiB of buffer, never a thread.
  if (config.max_connections < 8 || config.max_connections > 4096) {
    return Invalid(
        fmt::format("--web.max-connections {} must be between 8 and 4096", config.max_connections));
  }
  if (auto listen = ParseListenAddress(config.listen_address); !listen) return listen.error();
  return {};
}

// --web.health-max-sample-age, after --sampler.period (its default and its floor follow it).
Result<void> ValidateHealth(Config& config, const FlagText& text) {
  if (text.health_max_sample_age.empty()) {
    config.health_max_sample_age = DefaultHealthMaxSampleAge(config.sampler_period);
    return {};
  }
  auto parsed = ParseDurationFlag("--web.health-max-sample-age", text.health_max_sample_age);
  if (!parsed) return parsed.error();
  // Below two periods a healthy sampler would fail the probe between two samples.
  if (*parsed < std::chrono::seconds(1) || *parsed < 2 * config.sampler_period) {
    return Invalid(fmt::format(
        "--web.health-max-sample-age \"{}\" must be at least 1s and twice --sampler.period",
        text.health_max_sample_age));
  }
  config.health_max_sample_age = *parsed;
  return {};
}

// --config names a readable regular file (checked here so the error is a usage error naming it).
Result<void> ValidateConfigPath(const std::string& path) {
  if (path.empty()) return {};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Invalid(fmt::format("--config \"{}\": no such file", path));
  if (S_ISDIR(st.st_mode))
    return Invalid(fmt::format("--config \"{}\": is a directory, not a policy file", path));
  if (!S_ISREG(st.st_mode))
    return Invalid(fmt::format("--config \"{}\": not a regular file", path));
  if (::access(path.c_str(), R_OK) != 0)
    return Invalid(fmt::format("--config \"{}\": not readable", path));
  return {};
}

// Enforcing writes a policy to every device; the embedded default is a guess about the fabric, so
// one flag missed in a rollout must not write it. Observe and dry-run may still use it.
Result<void> ValidateEnforcePolicy(const Config& config) {
  if (config.remediation != RemediationMode::kEnforce || !config.config_path.empty()) return {};
  return Invalid(
      "--remediation=enforce needs --config: the embedded default policy is never enforced "
      "(to enforce it, write it with `roce_qos_exporter policy show-default > policy.yaml` and "
      "pass --config policy.yaml)");
}

// The attribution roots are host paths mounted into a container: relative ones would follow
// the exporter's working directory.
Result<void> ValidateAttributionRoots(const Config& config) {
  for (auto [flag, path] :
       {std::pair{"--attribution.proc-root", &config.attribution_proc_root},
        std::pair{"--attribution.pod-logs-root", &config.attribution_pod_logs_root}}) {
    if (path->empty() || path->front() != '/') {
      return Invalid(fmt::format("{} \"{}\" must be an absolute path", flag, *path));
    }
  }
  return {};
}

Result<void> Validate(Config& config, const FlagText& text) {
  if (auto valid = ValidateSampler(config, text); !valid) return valid;
  if (auto valid = ValidateSchedule(config, text); !valid) return valid;
  if (auto valid = ValidateQos(config, text); !valid) return valid;
  if (auto valid = ValidatePollers(config, text); !valid) return valid;
  if (auto valid = ValidateWeb(config); !valid) return valid;
  if (auto valid = ValidateHealth(config, text); !valid) return valid;
  if (auto valid = ValidateConfigPath(config.config_path); !valid) return valid;
  if (config.procfs_path.empty() || config.procfs_path.front() != '/') {
    return Invalid(
        fmt::format("--path.procfs \"{}\" must be an absolute path", config.procfs_path));
  }
  if (!config.debugfs_path.empty() && config.debugfs_path.front() != '/') {
    return Invalid(
        fmt::format("--path.debugfs \"{}\" must be an absolute path", config.debugfs_path));
  }
  if (auto valid = ValidateEnforcePolicy(config); !valid) return valid;
  if (auto valid = ValidateAttributionRoots(config); !valid) return valid;
  // A unix socket's path: absolute, and within sockaddr_un's sun_path (108 bytes with the NUL).
  if (const std::string& kubelet = config.attribution_kubelet_socket;
      !kubelet.empty() && (kubelet.front() != '/' || kubelet.size() > 107)) {
    return Invalid(fmt::format(
        "--attribution.kubelet-socket \"{}\" must be an absolute path of at most 107 bytes",
        kubelet));
  }
  // Compiles the regexes; a bad one is a usage error now rather than a failure at start.
  if (auto options = MakeSamplerOptions(config); !options) return options.error();
  return {};
}

// --storm.* and --derive.windows (docs/signals.md); ranges as in SONiC's PFC watchdog.
Result<void> ValidateDerive(Config& config, double threshold, const std::string& detection,
                            const std::string& restoration, const std::string& windows) {
  auto whole_millis = [](std::string_view flag,
                         const std::string& text) -> Result<std::chrono::milliseconds> {
    auto parsed = ParseDurationFlag(flag, text);
    if (!parsed) return parsed.error();
    return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  };
  auto detection_ms = whole_millis("--storm.detection-time", detection);
  if (!detection_ms) return detection_ms.error();
  std::optional<std::chrono::milliseconds> restoration_ms;
  if (!restoration.empty()) {
    auto parsed = whole_millis("--storm.restoration-time", restoration);
    if (!parsed) return parsed.error();
    restoration_ms = *parsed;
  }
  auto storm = MakeStormConfig(threshold, *detection_ms, restoration_ms);
  if (!storm) return storm.error();

  std::vector<std::chrono::seconds> parsed_windows;
  size_t start = 0;
  while (start <= windows.size()) {
    const size_t comma = std::min(windows.find(',', start), windows.size());
    const std::string item = windows.substr(start, comma - start);
    auto d = ParseDurationFlag("--derive.windows", item);
    if (!d) return d.error();
    if (*d % std::chrono::seconds(1) != std::chrono::nanoseconds(0)) {
      return Invalid(
          fmt::format("--derive.windows: \"{}\" is not a whole number of seconds", item));
    }
    parsed_windows.push_back(std::chrono::duration_cast<std::chrono::seconds>(*d));
    start = comma + 1;
  }
  auto derive = MakeDeriveConfig(std::move(parsed_windows), *storm);
  if (!derive) return derive.error();
  config.derive = std::move(derive.value());
  return {};
}

}  // namespace

Result<void> ApplyFlagText(Config& config, const FlagText& text) {
  if (text.include->count() > 0) config.device_include = text.device_include;
  if (text.exclude->count() > 0) config.device_exclude = text.device_exclude;
  if (text.raw->count() > 0) config.raw_include = text.raw_include;
  if (auto valid = ValidateDerive(config, text.storm_threshold, text.storm_detection,
                                  text.storm_restoration, text.derive_windows);
      !valid) {
    return valid;
  }
  if (auto valid = Validate(config, text); !valid) return valid;
  config.derive.max_read_gap = StormGapBound(config.sampler_period);
  return {};
}

}  // namespace roceqos
