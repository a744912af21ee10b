#include "exporter/app/capture.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/log_event.h"
#include "base/regular_file.h"
#include "collectors/capture/tape.h"
#include "exporter/app/check.h"
#include "exporter/app/qos_readers.h"
#include "exporter/app/storm_guard.h"
#include "exporter/app/subcommands.h"
#include "exporter/core/build_info.h"
#include "exporter/core/derived_signals.h"
#include "exporter/qos/policy_loader.h"
#include "exporter/qos/qos_engine.h"
#include "exporter/qos/qos_io.h"
#include "exporter/qos/qos_stage.h"
#include "exporter/render/exposition_cache.h"
#include "exporter/sampling/sampler.h"
#include "exporter/sampling/sources.h"
#include "exporter/signals/derive_stage.h"

namespace roceqos {
namespace {

constexpr int kCaptureError = 2;

// The observing QoS engine of the daemon with remediation off: it reads what the daemon reads.
Result<std::unique_ptr<QosEngine>> ObservingQosEngine(const Config& config) {
  Result<std::shared_ptr<const PolicySet>> policy = LoadConfiguredPolicy(config);
  if (!policy) return MakeError(EINVAL, "invalid QoS policy: " + policy.error().message);
  Result<std::unique_ptr<KernelQosReader>> reader = OpenQosReader(config);
  if (!reader) return MakeError(EINVAL, "QoS reader: " + reader.error().message);
  QosEngineOptions options;
  options.config_path = config.config_path;
  options.poll_interval = config.qos_poll_interval;
  options.dcqcn_poll_interval = config.qos_dcqcn_poll_interval;
  options.remediation.mode = RemediationMode::kOff;  // no remediation worker, no writer
  return std::make_unique<QosEngine>(options, *policy, std::move(*reader));
}

// `samples` passes of the daemon's sampler, a period apart; returns its /metrics body.
Result<std::string> SampleAndRender(const Config& config, int samples) {
  Result<SamplerOptions> options = MakeSamplerOptions(config);
  if (!options) return options.error();
  Result<std::unique_ptr<QosEngine>> qos = ObservingQosEngine(config);
  if (!qos) return qos.error();
  Sampler sampler(std::move(*options), MakeKernelSources());
  sampler.AddStage(std::make_unique<DeriveStage>(config.derive));
  sampler.AddStage(std::make_unique<QosStage>(qos->get(), StormGuardOf));
  for (int i = 0; i < samples; ++i) {
    // Pacing, not synchronisation: rates need two samples a period apart.
    if (i > 0) std::this_thread::sleep_for(config.sampler_period);
    sampler.SampleOnce();
  }
  ExpositionCache cache([&sampler] { return sampler.Latest(); }, [] { return ServingStats{}; });
  return cache.Get(false)->text;
}

// The check `check` would run, as JSON, without LLDP (a bundle records no lldpd) and without the
// GID items (a bundle records no addresses).
Result<CheckOptions> CheckOptionsFor(const Config& config) {
  Result<CheckOptions> options = CheckOptionsFromConfig(config);
  if (!options) return options.error();
  options->json = true;
  options->lldp = false;
  options->gids = false;
  return options;
}

// The manifest: what was captured, where and how. No host name (utsname.nodename is left out).
void FillManifest(const Config& config, const CaptureOptions& options, tape::Bundle& bundle) {
  utsname uts{};
  uname(&uts);
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  auto& meta = bundle.meta;
  meta.insert(
      meta.begin(),
      {{"format", fmt::format("{} {}", tape::kMagic, tape::kVersion)},
       {"exporter.version", std::string(kVersion)},
       {"exporter.revision", std::string(kGitRevision)},
       {"captured_at", when},
       {"kernel.sysname", uts.sysname},
       {"kernel.release", uts.release},
       {"kernel.version", uts.version},
       {"kernel.machine", uts.machine},
       {"capture.samples", std::to_string(options.samples)},
       {"capture.sampler_period_ms",
        std::to_string(
            std::chrono::duration_cast<std::chrono::milliseconds>(config.sampler_period).count())},
       {std::string(kMetaConfig),
        config.config_path.empty() ? std::string(kEmbeddedDefaultConfig) : config.config_path}});
  meta.emplace_back("count.netlink", std::to_string(bundle.netlink.size()));
  meta.emplace_back("count.ioctl", std::to_string(bundle.ioctls.size()));
  meta.emplace_back("count.fs", std::to_string(bundle.fs.size()));
}

// Opened before the capture runs, so a wrong --output fails at once with its reason rather than
// after the samples. -1 for "-" (standard output).
Result<int> OpenOutput(const std::string& path) {
  if (path == "-") return -1;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return MakeError(errno, fmt::format("--output {}: {}", path, std::strerror(errno)));
  return fd;
}

Result<void> WriteBundle(int fd, const std::string& path, const std::string& text,
                         std::ostream& out) {
  if (fd < 0) {
    out << text;
    return {};
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError(errno, fmt::format("write {}: {}", path, std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    return MakeError(errno, fmt::format("close {}: {}", path, std::strerror(errno)));
  }
  return {};
}

// The policy and the flags of the capture run that shape what check and /metrics say, so a
// replay checks what was checked (the default rule would select none of a test node's veths, the
// default policy would pass a node its own policy fails). Absent when the run left it at default.
void RecordSettings(const Config& config, tape::Bundle& bundle) {
  auto& meta = bundle.meta;
  if (config.policy_yaml) meta.emplace_back(kMetaPolicy, *config.policy_yaml);
  if (config.device_include) meta.emplace_back(kMetaDeviceInclude, *config.device_include);
  if (config.device_exclude) meta.emplace_back(kMetaDeviceExclude, *config.device_exclude);
  if (config.raw_include) meta.emplace_back(kMetaRawInclude, *config.raw_include);
  if (config.qos_configfs_tos) meta.emplace_back(kMetaConfigfsTos, "1");
  if (config.procfs_path != Config{}.procfs_path)
    meta.emplace_back(kMetaProcfs, config.procfs_path);
  if (!config.debugfs_path.empty()) meta.emplace_back(kMetaDebugfs, config.debugfs_path);
}

// The capture run reads its --config once, and the QoS engine, check and the bundle all use that
// text: what the bundle carries is what was checked, even if the file changes meanwhile.
Result<Config> WithPolicyText(const Config& config) {
  Config captured = config;
  if (config.config_path.empty()) return captured;
  Result<std::string> text = ReadRegularFile(config.config_path, kMaxPolicyFileBytes);
  if (!text) return MakeError(text.error().errnum, "--config " + text.error().message);
  captured.policy_yaml = std::move(*text);
  return captured;
}

const std::string* MetaValue(const tape::Bundle& bundle, std::string_view key) {
  for (const auto& [k, v] : bundle.meta) {
    if (k == key) return &v;
  }
  return nullptr;
}

// The policy a replay checks against: the command line's --config, else the capture's.
Result<void> ApplyCapturedPolicy(const tape::Bundle& bundle, Config& config, CapturedRun& run) {
  const std::string* path = MetaValue(bundle, kMetaConfig);
  const std::string* yaml = MetaValue(bundle, kMetaPolicy);
  const bool from_file = path != nullptr && !path->empty() && *path != kEmbeddedDefaultConfig;
  if (!config.config_path.empty()) {
    run.policy_from = "command line";
    run.policy_source = config.config_path;
    if (path != nullptr) run.captured_config = from_file ? *path : "embedded default";
    return {};
  }
  if (yaml != nullptr) {
    run.policy_from = "capture";
    config.config_path = from_file ? *path : "captured policy";
    config.policy_yaml = *yaml;
    run.policy_source = config.config_path;
    return {};
  }
  if (from_file) {
    return MakeError(EINVAL, fmt::format("captured with --config {}, whose content the bundle "
                                         "does not hold (written before captures carried their "
                                         "policy); name that policy with --config",
                                         *path));
  }
  run.policy_from = "embedded default";
  run.policy_source = "embedded default";
  return {};
}

// An optional flag (a regex) the command line did not give takes the capture's value.
void TakeOptional(const tape::Bundle& bundle, std::string_view key, std::string_view flag,
                  std::optional<std::string>& value, CapturedRun& run) {
  const std::string* captured = MetaValue(bundle, key);
  if (captured == nullptr || value) return;
  value = *captured;
  run.flags.push_back(fmt::format("{}={}", flag, *captured));
}

// A path flag the command line left at its default takes the capture's value, which must be
// absolute: the bundle's file records carry that path.
Result<void> TakePath(const tape::Bundle& bundle, std::string_view key, std::string_view flag,
                      std::string_view default_value, std::string& value, CapturedRun& run) {
  const std::string* captured = MetaValue(bundle, key);
  if (captured == nullptr) return {};
  if (captured->empty() || captured->front() != '/')
    return MakeError(EINVAL, fmt::format("{} \"{}\" is not an absolute path", key, *captured));
  if (value != default_value) return {};
  value = *captured;
  run.flags.push_back(fmt::format("{}={}", flag, *captured));
  return {};
}

// The capture's flags that shape what check and /metrics say, where the command line leaves the
// default (docs/capture.md lists them).
Result<void> ApplyCapturedFlags(const tape::Bundle& bundle, Config& config, CapturedRun& run) {
  TakeOptional(bundle, kMetaDeviceInclude, "--collector.device-include", config.device_include,
               run);
  TakeOptional(bundle, kMetaDeviceExclude, "--collector.device-exclude", config.device_exclude,
               run);
  TakeOptional(bundle, kMetaRawInclude, "--collector.ethtool.raw-include", config.raw_include, run);
  if (const std::string* tos = MetaValue(bundle, kMetaConfigfsTos); tos != nullptr) {
    if (*tos != "0" && *tos != "1") {
      return MakeError(EINVAL, fmt::format("{} is \"{}\", not 0 or 1", kMetaConfigfsTos, *tos));
    }
    if (*tos == "1" && !config.qos_configfs_tos) {
      config.qos_configfs_tos = true;
      run.flags.emplace_back("--qos.configfs-tos");
    }
  }
  if (auto taken = TakePath(bundle, kMetaProcfs, "--path.procfs", Config{}.procfs_path,
                            config.procfs_path, run);
      !taken)
    return taken;
  return TakePath(bundle, kMetaDebugfs, "--path.debugfs", "", config.debugfs_path, run);
}

// One line saying what the replay took from its bundle, and one more when --config overrode the
// captured policy: a replay that checks against another policy than the capture did says so.
// Warnings, so a one-shot `check` (which logs warn and above unless --log.level is given) shows
// them: everything this process reports is another node's state, judged by these settings.
void LogCapturedRun(const Config& config, const CapturedRun& run) {
  std::string flags;
  for (const std::string& flag : run.flags) flags += (flags.empty() ? "" : " ") + flag;
  LogEvent(spdlog::level::warn, "replaying a capture",
           {{"bundle", config.replay_path},
            {"policy", run.policy_source},
            {"policy_from", run.policy_from},
            {"captured_flags", flags.empty() ? "none" : flags}});
  if (run.captured_config) {
    LogEvent(spdlog::level::warn, "--config overrides the captured policy",
             {{"config", config.config_path}, {"captured_config", *run.captured_config}});
  }
}

}  // namespace

int RunCapture(const Config& flags, const CaptureOptions& options, std::ostream& out,
               std::ostream& err) {
  if (options.samples < 1) {
    err << "roce_qos_exporter capture: --samples must be at least 1\n";
    return kCaptureError;
  }
  Result<Config> captured = WithPolicyText(flags);
  if (!captured) {
    err << "roce_qos_exporter capture: " << captured.error().message << "\n";
    return kCaptureError;
  }
  const Config& config = *captured;
  Result<CheckOptions> check_options = CheckOptionsFor(config);
  if (!check_options) {
    err << "roce_qos_exporter capture: " << check_options.error().message << "\n";
    return kCaptureError;
  }
  Result<int> output = OpenOutput(options.output);
  if (!output) {
    err << "roce_qos_exporter capture: " << output.error().message << "\n";
    return kCaptureError;
  }
  tape::StartRecording();
  Result<std::string> metrics = SampleAndRender(config, options.samples);
  std::ostringstream check_out, check_err;
  const int check_status = RunCheck(*check_options, check_out, check_err);
  tape::Bundle bundle = tape::StopRecording();
  if (!metrics) {
    if (*output >= 0) ::close(*output);
    err << "roce_qos_exporter capture: " << metrics.error().message << "\n";
    return kCaptureError;
  }
  // The run's own outputs: what replay must reproduce, and what a reader compares first.
  bundle.meta.emplace_back("live.metrics", *metrics);
  bundle.meta.emplace_back("live.check_json", check_out.str());
  bundle.meta.emplace_back("live.check_stderr", check_err.str());
  bundle.meta.emplace_back("live.check_exit", std::to_string(check_status));
  FillManifest(config, options, bundle);
  RecordSettings(config, bundle);
  if (Result<void> written = WriteBundle(*output, options.output, tape::Serialize(bundle), out);
      !written) {
    err << "roce_qos_exporter capture: " << written.error().message << "\n";
    return kCaptureError;
  }
  if (options.output != "-") {
    err << fmt::format("wrote {}: {} netlink exchanges, {} ethtool calls, {} file reads\n",
                       options.output, bundle.netlink.size(), bundle.ioctls.size(),
                       bundle.fs.size());
  }
  return 0;
}

Result<CapturedRun> ApplyCapturedRun(const tape::Bundle& bundle, Config& config) {
  CapturedRun run;
  if (Result<void> policy = ApplyCapturedPolicy(bundle, config, run); !policy) {
    return policy.error();
  }
  if (Result<void> flags = ApplyCapturedFlags(bundle, config, run); !flags) return flags.error();
  // The regexes compile now, so a bad one is refused at start with the bundle named.
  if (Result<SamplerOptions> sampler = MakeSamplerOptions(config); !sampler) {
    return sampler.error();
  }
  return run;
}

Result<std::shared_ptr<const PolicySet>> LoadConfiguredPolicy(const Config& config) {
  if (!config.policy_yaml) return LoadPolicy(config.config_path);
  Result<PolicySet> set = ParsePolicy(*config.policy_yaml, config.config_path);
  if (!set) return set.error();
  return std::make_shared<const PolicySet>(std::move(*set));
}

int StartReplayFrom(Config& config, std::ostream& err) {
  if (config.remediation == RemediationMode::kEnforce) {
    err << "roce_qos_exporter: --replay cannot be combined with --remediation=enforce (a replay "
           "never writes)\n";
    return kCaptureError;
  }
  Result<std::string> text = ReadRegularFile(config.replay_path, tape::kMaxBundleBytes);
  if (!text) {
    err << "roce_qos_exporter: --replay " << text.error().message << "\n";
    return kCaptureError;
  }
  Result<tape::Bundle> bundle = tape::Parse(*text);
  Result<CapturedRun> run = bundle ? ApplyCapturedRun(*bundle, config) : bundle.error();
  if (!run) {
    err << "roce_qos_exporter: --replay " << config.replay_path << ": " << run.error().message
        << "\n";
    return kCaptureError;
  }
  LogCapturedRun(config, *run);
  tape::StartReplay(std::move(*bundle));
  return 0;
}

}  // namespace roceqos
