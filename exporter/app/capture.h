#pragma once

// `roce_qos_exporter capture --output FILE` records everything the exporter reads on this node
// into one bundle, and `--replay FILE` runs the exporter (daemon or `check`) against a bundle
// with no kernel access (docs/capture.md).

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/capture/tape_bundle.h"
#include "exporter/app/config.h"
#include "exporter/qos/policy.h"

namespace roceqos {

struct CaptureOptions {
  std::string output;  // --output FILE ("-": standard output)
  int samples = 3;     // --samples: sampler passes (the period apart), so rates have two points
};

/// Runs discovery, `samples` sampler passes with the derive and QoS stages, and `check --json`
/// under the recording seam; writes the bundle with a manifest and the run's own /metrics and
/// check output. Returns the process exit code (0, or 2 with a message on `err`).
int RunCapture(const Config& config, const CaptureOptions& options, std::ostream& out,
               std::ostream& err);

/// Manifest keys of the capture run's settings that shape what `check` and /metrics say
/// (docs/capture.md "What a capture carries"). Each is present only when the capture run set it
/// (bundles written before a key existed lack it). capture.config is the policy's path, or
/// "(embedded default)"; capture.policy its YAML as the capture run read and used it.
inline constexpr std::string_view kMetaConfig = "capture.config";
inline constexpr std::string_view kMetaPolicy = "capture.policy";
inline constexpr std::string_view kMetaDeviceInclude = "capture.device_include";
inline constexpr std::string_view kMetaDeviceExclude = "capture.device_exclude";
inline constexpr std::string_view kMetaRawInclude = "capture.raw_include";
inline constexpr std::string_view kMetaConfigfsTos = "capture.qos_configfs_tos";
inline constexpr std::string_view kMetaProcfs = "capture.procfs_path";
inline constexpr std::string_view kMetaDebugfs = "capture.debugfs_path";
inline constexpr std::string_view kEmbeddedDefaultConfig = "(embedded default)";

/// What a replay took from its bundle, for the log line that says so.
struct CapturedRun {
  /// "capture" (the bundle's policy), "command line" (--config given), "embedded default".
  std::string policy_from;
  std::string policy_source;                   // the path the check reports, or "embedded default"
  std::optional<std::string> captured_config;  // the capture's --config, when --config overrode it
  std::vector<std::string> flags;              // "--flag=value" taken from the bundle
};

/// Takes the capture run's policy and flags from `bundle` into `config`: its --config content
/// (unless `config` names its own --config), then each flag the command line leaves at its
/// default. A bundle captured with --config that does not hold the policy (written before captures
/// carried it) is an Error unless `config` names a --config; so is a setting that does not
/// validate (a regex that does not compile, a relative --path.procfs, a flag value not 0/1).
Result<CapturedRun> ApplyCapturedRun(const tape::Bundle& bundle, Config& config);

/// The policy `config` names: its policy_yaml (a capture's) when set, else the --config file or
/// the embedded default (LoadPolicy).
Result<std::shared_ptr<const PolicySet>> LoadConfiguredPolicy(const Config& config);

/// Loads `config.replay_path` and switches every collector to answer from it. Refuses
/// --remediation=enforce (a replay never writes). Takes the capture's policy and flags into
/// `config` (ApplyCapturedRun) and logs one line saying what it took. Returns 0, or 2 with a
/// message on `err`.
int StartReplayFrom(Config& config, std::ostream& err);

}  // namespace roceqos
