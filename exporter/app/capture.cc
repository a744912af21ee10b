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

#include "base/regular_file.h"
#include "collectors/capture/tape.h"
#include "exporter/app/check.h"
#include "exporter/app/storm_guard.h"
#include "exporter/app/subcommands.h"
#include "exporter/core/build_info.h"
#include "exporter/core/derived_signals.h"
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
  Result<std::shared_ptr<const PolicySet>> policy = LoadPolicy(config.config_path);
  if (!policy) return MakeError(EINVAL, "invalid QoS policy: " + policy.error().message);
  Result<std::unique_ptr<KernelQosReader>> reader =
      KernelQosReader::Open(HostPaths{}, config.qos_configfs_tos);
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

// The check `check` would run, as JSON, without LLDP: a bundle records no lldpd.
Result<CheckOptions> CheckOptionsFor(const Config& config) {
  Result<CheckOptions> options = CheckOptionsFromConfig(config);
  if (!options) return options.error();
  options->json = true;
  options->lldp = false;
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
       {"capture.config", config.config_path.empty() ? "(embedded default)" : config.config_path}});
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

// The selection flags of the capture run, so a replay selects the devices that were captured
// (the default rule would select none of a test node's veths). Absent when the flag was not given.
void RecordSelection(const Config& config, tape::Bundle& bundle) {
  if (config.device_include) bundle.meta.emplace_back(kMetaDeviceInclude, *config.device_include);
  if (config.device_exclude) bundle.meta.emplace_back(kMetaDeviceExclude, *config.device_exclude);
}

const std::string* MetaValue(const tape::Bundle& bundle, std::string_view key) {
  for (const auto& [k, v] : bundle.meta) {
    if (k == key) return &v;
  }
  return nullptr;
}

}  // namespace

int RunCapture(const Config& config, const CaptureOptions& options, std::ostream& out,
               std::ostream& err) {
  if (options.samples < 1) {
    err << "roce_qos_exporter capture: --samples must be at least 1\n";
    return kCaptureError;
  }
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
  RecordSelection(config, bundle);
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
  if (!bundle) {
    err << "roce_qos_exporter: --replay " << config.replay_path << ": " << bundle.error().message
        << "\n";
    return kCaptureError;
  }
  // The capture's selection, unless this command line names its own.
  if (const std::string* include = MetaValue(*bundle, kMetaDeviceInclude);
      include != nullptr && !config.device_include) {
    config.device_include = *include;
  }
  if (const std::string* exclude = MetaValue(*bundle, kMetaDeviceExclude);
      exclude != nullptr && !config.device_exclude) {
    config.device_exclude = *exclude;
  }
  tape::StartReplay(std::move(*bundle));
  return 0;
}

}  // namespace roceqos
