#include "exporter/app/cli.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <optional>
#include <ostream>

#include "base/duration.h"
#include "exporter/app/flag_text.h"
#include "exporter/app/subcommands.h"
#include "exporter/core/build_info.h"
#include "exporter/http/health.h"
#include "exporter/http/listen_address.h"
#include "exporter/render/metrics_doc.h"
#include "exporter/sampling/sampler.h"
#include "exporter/signals/derive.h"

namespace roceqos {
namespace {

constexpr std::string_view kProgram = "roce_qos_exporter";

void AddWebFlags(CLI::App& app, Config& config, FlagText& text) {
  app.add_option("--web.listen-address", config.listen_address,
                 "Address to serve metrics and health on, [host]:port: :port (every interface, "
                 "IPv6 and IPv4), 127.0.0.1:port, [::1]:port, [::]:port")
      ->capture_default_str();
  app.add_option("--web.telemetry-path", config.telemetry_path, "Path of the metrics endpoint")
      ->capture_default_str();
  app.add_flag("--web.enable-lifecycle", config.enable_lifecycle,
               "Allow POST /-/reload (off: it answers 403; SIGHUP reloads either way)");
  app.add_option("--web.max-requests", config.max_requests,
                 "Requests handled at once; beyond it 503 at once (0: no cap)")
      ->capture_default_str();
  app.add_option("--web.max-connections", config.max_connections,
                 "Connections open at once (8..4096; no thread each); each must send its whole "
                 "request within 2s; beyond the cap the oldest idle one is closed")
      ->capture_default_str();
  app.add_option("--web.health-max-sample-age", text.health_max_sample_age,
                 "/-/healthy answers 503 once the latest sample is older than this (before the "
                 "first sample: once max(2m, this) passed since start); Prometheus duration, at "
                 "least 1s and twice --sampler.period (default: max(30s, 32 x --sampler.period))");
  text.log_level =
      app.add_option("--log.level", config.log_level,
                     "Minimum level logged (subcommands: warn unless given, so a one-shot run's "
                     "stderr carries only warnings and errors)")
          ->check(CLI::IsMember({"debug", "info", "warn", "error"}))
          ->capture_default_str();
  app.add_option("--log.format", config.log_format, "Log line format on stderr")
      ->check(CLI::IsMember({"logfmt", "json"}))
      ->capture_default_str();
}

void AddSamplerFlags(CLI::App& app, Config& config, FlagText& text) {
  text.include = app.add_option(
      "--collector.device-include", text.device_include,
      "Regex (full match) of netdevs to sample, instead of the default selection (Mellanox PFs "
      "and netdevs bound to an RDMA port)");
  text.exclude = app.add_option("--collector.device-exclude", text.device_exclude,
                                "Regex (full match) of netdevs never to sample");
  text.raw = app.add_option(
      "--collector.ethtool.raw-include", text.raw_include,
      "Regex (full match) of ethtool -S names without a roce_ family to export raw as "
      "roce_ethtool_stat (off by default)");
  app.add_option("--sampler.period", text.period,
                 "Shortest period of a port: ports whose counters move are read this often, or "
                 "less often where --sampler.duty-cycle requires; Prometheus duration "
                 "(10ms..1h); lengthened while over budget")
      ->capture_default_str();
  app.add_option("--sampler.idle-period", text.idle_period,
                 "Shortest period of a port whose counters did not move at its last read, "
                 "lengthened so that idle ports take at most half of --sampler.duty-cycle; 0: "
                 "no per-port schedule, every sample reads every port")
      ->capture_default_str();
  app.add_option("--sampler.duty-cycle", config.sampler_duty_cycle,
                 "Share of the time statistics reads may take (kernel duty cycle, RTNL held), "
                 "in (0, 1]; the per-port schedule lengthens the periods to keep to it")
      ->capture_default_str();
  app.add_option("--sampler.budget", config.sampler_budget,
                 "Share of the period that kernel calls of one sample may take, in (0, 1]")
      ->capture_default_str();
  app.add_option("--sampler.discovery-interval", text.discovery,
                 "How often devices are re-discovered, Prometheus duration")
      ->capture_default_str();
}

void AddQosFlags(CLI::App& app, Config& config, FlagText& text) {
  app.add_option("--config", config.config_path,
                 "Desired QoS policy file (YAML); without it the embedded default policy applies "
                 "(observe and dry-run only: enforce requires this flag)");
  std::vector<std::string> modes;
  for (const RemediationMode mode : kAllRemediationModes) {
    modes.emplace_back(RemediationModeName(mode));
  }
  app.add_option("--remediation", text.remediation,
                 "Re-apply the policy when the QoS state drifts: off, dry-run (log the plan) or "
                 "enforce")
      ->check(CLI::IsMember(modes))
      ->capture_default_str();
  app.add_option("--remediation.backoff", text.backoff,
                 "Wait after a remediation attempt; doubles with each attempt that did not hold "
                 "(1s to 1w)")
      ->capture_default_str();
  app.add_option("--remediation.max-backoff", text.max_backoff,
                 "Cap of the wait between attempts (at most 1w)")
      ->capture_default_str();
  app.add_option("--remediation.max-attempts", config.remediation_max_attempts,
                 "Attempts that did not hold before remediation gives up on a device")
      ->capture_default_str();
  app.add_option("--remediation.lock-file", config.remediation_lock_file,
                 "Enforce mode: flock held by the one enforcing instance of the node; a second "
                 "instance stays in observe mode")
      ->capture_default_str();
  app.add_option("--remediation.state-file", config.remediation_state_file,
                 "Enforce mode: attempts, back-off, give-up and applies in progress, kept across "
                 "restarts (default: $STATE_DIRECTORY/remediation.json, else "
                 "/var/lib/roce-qos-exporter/remediation.json)");
  app.add_option("--qos.poll-interval", text.qos_poll,
                 "How often the QoS state is read in full, besides change notifications; "
                 "Prometheus duration (100ms..1h)")
      ->capture_default_str();
  app.add_option("--qos.dcqcn-poll-interval", text.qos_dcqcn_poll,
                 "How often a poll also reads the MOFED ecn/ sysfs tree (ECN enables, CNP "
                 "marking, DCQCN parameters; each file is a firmware command on mlx5); "
                 "Prometheus duration (100ms..1h)")
      ->capture_default_str();
  app.add_option("--path.procfs", config.procfs_path,
                 "procfs mount point: net.ipv4.tcp_ecn is read and written at "
                 "<this>/sys/net/ipv4/tcp_ecn (in a container, where the host's file is mounted "
                 "outside /proc)")
      ->capture_default_str();
  app.add_option("--path.debugfs", config.debugfs_path,
                 "debugfs mount point (/sys/kernel/debug) to read, and in enforce write, the "
                 "inbox mlx5 driver's DCQCN parameters in <this>/mlx5/<pci>/cc_params where "
                 "MOFED's ecn/ sysfs is absent; root only. Empty (default): not read");
  app.add_flag("--qos.configfs-tos", config.qos_configfs_tos,
               "Read the RoCE ToS from rdma_cm configfs, creating and removing "
               "/sys/kernel/config/rdma_cm/<dev> when needed (a side effect; off by default)");
}

void AddTransceiverFlags(CLI::App& app, Config& config, FlagText& text) {
  app.add_option("--transceiver.interval", text.transceiver_interval,
                 "How often the module EEPROM (transceiver diagnostics) of every selected netdev "
                 "is read, on its own thread; Prometheus duration, 0 turns it off (1s..24h)")
      ->capture_default_str();
  app.add_flag("--transceiver.serial", config.transceiver_serial,
               "Put the module serial number on roce_transceiver_info (off by default: one more "
               "unique label value per module)");
}

void AddLldpFlags(CLI::App& app, Config& config, FlagText& text) {
  app.add_option("--lldp.interval", text.lldp_interval,
                 "How often lldpd is asked for the LLDP neighbours of the selected netdevs and "
                 "the switch's PFC/ETS/APP/frame size, on its own thread; Prometheus duration, 0 "
                 "turns it off (1s..1h)")
      ->capture_default_str();
  app.add_option("--lldp.socket", config.lldp_socket,
                 "lldpd's control socket (default: liblldpctl's, /run/lldpd.socket on Debian)");
  app.add_flag("--lldp.unhealthy-on-stale-socket", config.lldp_unhealthy_on_stale_socket,
               "/-/healthy fails while lldpd listens on a new socket at --lldp.socket and this "
               "process holds the old one (a container's mount of the socket file after an lldpd "
               "restart), so a liveness probe restarts it; Kubernetes components/lldp sets it");
  app.add_option("--lldp.library", config.lldp_library,
                 "liblldpctl to load instead of liblldpctl.so.4 from the library path: the host "
                 "lldpd's own, whose answers it always reads (docs/lldp.md \"lldpd of another "
                 "version\")");
}

void AddLinkFlags(CLI::App& app, FlagText& text) {
  app.add_option("--link.interval", text.link_interval,
                 "How often the FEC, eth-phy/eth-mac and link-state statistics of every selected "
                 "netdev are read over ethtool netlink, on its own thread (firmware reads on "
                 "mlx5, docs/link.md); Prometheus duration, 0 turns it off (1s..1h)")
      ->capture_default_str();
}

void AddPcieFlags(CLI::App& app, Config& config, FlagText& text) {
  app.add_option("--pcie.interval", text.pcie_interval,
                 "How often the PCIe link speed, width and AER error totals of every selected "
                 "netdev's PCI function and upstream port are read from sysfs, on its own thread; "
                 "Prometheus duration, 0 turns it off (1s..24h)")
      ->capture_default_str();
  app.add_flag("--gpu-topology.nearest-only", config.gpu_nearest_only,
               "Keep, per selected netdev, only the roce_nic_gpu_topology series of its nearest "
               "GPUs (off by default: every NIC x GPU pair, docs/gpus.md)");
}

void AddGidFlags(CLI::App& app, FlagText& text) {
  app.add_option("--gids.interval", text.gids_interval,
                 "How often every address of the selected netdevs (and their VLANs) is checked "
                 "for a RoCE v2 GID on the bound RDMA port, on the sampler thread (docs/gids.md); "
                 "Prometheus duration, 0 turns it off (10s..24h)")
      ->capture_default_str();
}

void AddAttributionFlags(CLI::App& app, Config& config, FlagText& text) {
  app.add_option("--attribution.interval", text.attribution_interval,
                 "How often the QPs on the selected netdevs' RDMA ports are counted per owner "
                 "(pod, Slurm job, systemd unit, kernel) on its own thread: one RDMA netlink QP "
                 "dump per device and /proc/PID/cgroup of each PID holding QPs; needs the host "
                 "PID namespace (docs/attribution.md); Prometheus duration, 0 turns it off "
                 "(1s..24h)")
      ->capture_default_str();
  app.add_option(
         "--attribution.proc-root", config.attribution_proc_root,
         "The procfs of the host PID namespace, where /PID/cgroup names a QP holder's owner")
      ->capture_default_str();
  app.add_option("--attribution.pod-logs-root", config.attribution_pod_logs_root,
                 "The kubelet's pod log directory (<namespace>_<name>_<uid> per pod), read-only, "
                 "for pod names; a missing directory leaves pods named by UID")
      ->capture_default_str();
}

void AddKubeletFlags(CLI::App& app, Config& config) {
  app.add_option("--attribution.kubelet-socket", config.attribution_kubelet_socket,
                 "The kubelet's PodResources socket, asked for the names of the pods and the "
                 "devices (GPUs, SR-IOV VFs) allocated to them (usually "
                 "/var/lib/kubelet/pod-resources/kubelet.sock; docs/kubelet.md). Empty "
                 "(default): not asked");
}

void AddDeriveFlags(CLI::App& app, FlagText& text) {
  app.add_option("--storm.threshold", text.storm_threshold,
                 "Paused-time ratio of a sample interval at or above which (with no packet "
                 "moving on the priority) it counts towards a PFC storm, in (0, 1]")
      ->capture_default_str();
  app.add_option("--storm.detection-time", text.storm_detection,
                 "How long the storm condition must hold before a PFC storm is declared "
                 "(100ms..5s)")
      ->capture_default_str();
  app.add_option("--storm.restoration-time", text.storm_restoration,
                 "How long the storm condition must be absent before the storm is restored "
                 "(100ms..60s; default twice the detection time)");
  app.add_option("--derive.windows", text.derive_windows,
                 "Sliding windows of the derived peak and ratio gauges, comma-separated whole "
                 "seconds (1 to 4 windows of 1s..5m); read one at least as long as the scrape "
                 "interval")
      ->capture_default_str();
}

// The defaults shown by --help, as the flags spell them.
FlagText DefaultFlagText(const Config& config) {
  FlagText text;
  text.period = FormatDuration(config.sampler_period);
  text.idle_period = FormatDuration(config.sampler_idle_period);
  text.discovery = FormatDuration(config.discovery_interval);
  text.qos_poll = FormatDuration(config.qos_poll_interval);
  text.qos_dcqcn_poll = FormatDuration(config.qos_dcqcn_poll_interval);
  text.transceiver_interval = FormatDuration(config.transceiver_interval);
  text.lldp_interval = FormatDuration(config.lldp_interval);
  text.link_interval = FormatDuration(config.link_interval);
  text.pcie_interval = FormatDuration(config.pcie_interval);
  text.remediation = RemediationModeName(config.remediation);
  text.backoff = FormatDuration(config.remediation_backoff);
  text.max_backoff = FormatDuration(config.remediation_max_backoff);
  text.storm_threshold = config.derive.storm.threshold;
  text.storm_detection = FormatDuration(config.derive.storm.detection_time);
  text.gids_interval = FormatDuration(config.gids_interval);
  text.attribution_interval = FormatDuration(config.attribution_interval);
  for (auto window : config.derive.windows) {
    text.derive_windows += (text.derive_windows.empty() ? "" : ",") + WindowLabel(window);
  }
  return text;
}

// Every option of `app` and of its subcommands, at any depth.
template <typename Visit>
void ForEachOption(CLI::App& app, Visit&& visit) {
  for (CLI::Option* option : app.get_options()) visit(*option);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    ForEachOption(*sub, visit);
}

// An option that takes one value (every flag but the repeatable ones, --netdev) may be given once.
// CLI11 would refuse a second one as "At Most 1 required but received 2" and take the last of a
// repeated boolean flag silently; both are let through to RepeatedOption, which names the flag.
void LetRepeatsThrough(CLI::App& app) {
  ForEachOption(app, [](CLI::Option& option) {
    if (option.get_items_expected_max() <= 1)
      option.multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  });
}

// After parsing: the first single-value option given more than once, as a usage error.
Result<void> RepeatedOption(CLI::App& app) {
  std::optional<std::string> message;
  ForEachOption(app, [&message](CLI::Option& option) {
    if (message || option.get_items_expected_max() > 1 || option.count() < 2) return;
    const size_t times = option.count();
    message = fmt::format("{} given {}: give it once", option.get_name(),
                          times == 2 ? "twice" : fmt::format("{} times", times));
  });
  if (message) return MakeError(EINVAL, *message);
  return {};
}

// CLI11's own outcomes: help and version to `out` (exit 0), a parse error as one line. Returns
// the exit code when the process should exit now.
std::optional<int> RunParser(CLI::App& app, std::span<const char* const> args, std::ostream& out,
                             std::ostream& err) {
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');  // the error is one line
    err << kProgram << ": " << message << " (see --help)\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace

CliOutcome ParseCommandLine(std::span<const char* const> args, std::ostream& out,
                            std::ostream& err) {
  CliOutcome outcome;
  Config& config = outcome.config;
  FlagText text = DefaultFlagText(config);
  CLI::App app{
      "Prometheus exporter and QoS drift alerter for lossless RoCEv2 networks on NVIDIA/Mellanox "
      "ConnectX (mlx5) NICs. Samples per-priority PFC/ECN/CNP counters every --sampler.period and "
      "serves them on --web.telemetry-path.",
      std::string(kProgram)};
  app.set_version_flag(
      "--version", fmt::format("{} version {} (revision {})", kProgram, kVersion, kGitRevision));
  AddWebFlags(app, config, text);
  AddSamplerFlags(app, config, text);
  AddQosFlags(app, config, text);
  AddTransceiverFlags(app, config, text);
  AddLldpFlags(app, config, text);
  AddDeriveFlags(app, text);
  AddLinkFlags(app, text);
  AddPcieFlags(app, config, text);
  AddGidFlags(app, text);
  AddAttributionFlags(app, config, text);
  AddKubeletFlags(app, config);
  app.add_option(
      "--replay", config.replay_path,
      "Answer every kernel read from this bundle (written by the capture subcommand) instead "
      "of the kernel; serves /metrics and runs `check` from it with the capture's policy and "
      "flags, unless given here (docs/capture.md)");
  app.add_flag("--print-metrics-doc", text.print_metrics_doc,
               "Print the metric catalogue (docs/metrics.md) and exit");
  RegisterSubcommands(app, outcome.subcommand);
  LetRepeatsThrough(app);

  if (std::optional<int> exit_code = RunParser(app, args, out, err)) {
    outcome.exit_code = *exit_code;
    return outcome;
  }
  Result<void> valid = RepeatedOption(app);
  if (valid) valid = ApplyFlagText(config, text);
  if (!valid) {
    err << kProgram << ": " << valid.error().message << " (see --help)\n";
    outcome.exit_code = kExitUsage;
    return outcome;
  }
  if (text.print_metrics_doc) {
    out << GenerateMetricsDoc();
    return outcome;
  }
  outcome.kind =
      outcome.subcommand ? CliOutcome::Kind::kSubcommand : CliOutcome::Kind::kRunExporter;
  // A subcommand is a one-shot run read by a person or a script: the daemon's info lines
  // (discovery, RDMA netlink absent) would be noise on its stderr every time.
  if (outcome.subcommand && text.log_level->count() == 0) config.log_level = "warn";
  return outcome;
}

}  // namespace roceqos
