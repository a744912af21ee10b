#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "exporter/qos/remediate.h"
#include "exporter/sampling/sampler.h"
#include "exporter/signals/derive.h"

namespace roceqos {

/// The longest --remediation.backoff and --remediation.max-backoff: one week.
inline constexpr std::chrono::seconds kMaxRemediationBackoff = std::chrono::hours(24 * 7);

/// Everything the command line sets. Defaults are the zero-configuration behaviour.
struct Config {
  std::string listen_address = ":9879";     // --web.listen-address (http/listen_address.h)
  std::string telemetry_path = "/metrics";  // --web.telemetry-path
  bool enable_lifecycle = false;            // --web.enable-lifecycle: POST /-/reload allowed
  int max_requests = 40;                    // --web.max-requests: handled at once, then 503
  int max_connections = 256;                // --web.max-connections: open at once (no thread each)
  std::string log_level = "info";           // --log.level: debug|info|warn|error
  std::string log_format = "logfmt";        // --log.format: logfmt|json
  std::optional<std::string> device_include;  // --collector.device-include (full-match regex)
  std::optional<std::string> device_exclude;  // --collector.device-exclude
  std::optional<std::string> raw_include;     // --collector.ethtool.raw-include
  std::chrono::nanoseconds sampler_period = std::chrono::milliseconds(250);  // --sampler.period
  double sampler_budget = 0.5;                                               // --sampler.budget
  std::chrono::nanoseconds sampler_idle_period = std::chrono::seconds(1);  // --sampler.idle-period
  double sampler_duty_cycle = 0.02;                                        // --sampler.duty-cycle
  std::chrono::nanoseconds discovery_interval = std::chrono::seconds(5);
  std::string config_path;  // --config: policy YAML; empty = the embedded default policy
  RemediationMode remediation = RemediationMode::kOff;  // --remediation (QoS engine)
  std::chrono::nanoseconds qos_poll_interval = std::chrono::seconds(5);  // --qos.poll-interval
  /// --qos.dcqcn-poll-interval
  std::chrono::nanoseconds qos_dcqcn_poll_interval = std::chrono::seconds(30);
  std::chrono::seconds remediation_backoff{30};       // --remediation.backoff
  std::chrono::seconds remediation_max_backoff{600};  // --remediation.max-backoff, <= 1w
  int remediation_max_attempts = 5;                   // --remediation.max-attempts
  /// --remediation.lock-file: flock(2) that makes one enforcer per node
  /// (exporter/app/enforcer_lock.h)
  std::string remediation_lock_file = "/var/lib/roce-qos-exporter/enforce.lock";
  /// --remediation.state-file: attempts, back-off, give-up and applies in progress across
  /// restarts; empty: $STATE_DIRECTORY/remediation.json, else /var/lib/roce-qos-exporter/...
  std::string remediation_state_file;
  bool qos_configfs_tos = false;  // --qos.configfs-tos: may mkdir rdma_cm/<dev> to read the ToS
  /// --path.procfs: where <procfs>/sys/net/ipv4/tcp_ecn is read and written. A container gets the
  /// host's file mounted elsewhere: runtimes refuse any mount inside /proc (runc's
  /// checkProcMount), so the enforce overlay mounts it at /host/proc/sys/net/ipv4/tcp_ecn.
  std::string procfs_path = "/proc";
  /// --path.debugfs: where debugfs is mounted, to read (and in enforce write) the inbox mlx5_ib
  /// driver's DCQCN cc_params where MOFED's ecn/ tree is absent. Empty: not read.
  std::string debugfs_path;
  /// --web.health-max-sample-age: /-/healthy fails once the latest snapshot is older (health.h);
  /// the parser sets DefaultHealthMaxSampleAge(sampler_period) when the flag is absent.
  std::chrono::nanoseconds health_max_sample_age = std::chrono::seconds(30);
  /// --transceiver.interval: module EEPROM poll cadence, on its own thread; 0 = off
  std::chrono::nanoseconds transceiver_interval = std::chrono::seconds(60);
  bool transceiver_serial = false;  // --transceiver.serial: serial number on roce_transceiver_info
  /// --lldp.interval: lldpd query cadence, on its own thread; 0 = off
  std::chrono::nanoseconds lldp_interval = std::chrono::seconds(10);
  std::string lldp_socket;   // --lldp.socket; empty: liblldpctl's default
  std::string lldp_library;  // --lldp.library; empty: liblldpctl.so.4 from the library path
  /// --lldp.unhealthy-on-stale-socket: /-/healthy fails while the socket is a replaced one
  bool lldp_unhealthy_on_stale_socket = false;
  /// --storm.threshold, --storm.detection-time, --storm.restoration-time, --derive.windows
  DeriveConfig derive;
  /// --replay: a capture bundle to answer every kernel read from (exporter/app/capture.h)
  std::string replay_path;
  /// The policy's YAML, named config_path, when it comes from a capture bundle rather than the
  /// file (--replay, capture: exporter/app/capture.h LoadConfiguredPolicy); unset: read the file.
  std::optional<std::string> policy_yaml;
  /// --link.interval: ethtool netlink link statistics cadence, on its own thread; 0 = off
  std::chrono::nanoseconds link_interval = std::chrono::seconds(10);
  /// --pcie.interval: PCIe link and AER poll cadence (sysfs), on its own thread; 0 = off
  std::chrono::nanoseconds pcie_interval = std::chrono::seconds(30);
  /// --gids.interval: RoCE v2 GID check cadence, a sample stage (docs/gids.md); 0 = off
  std::chrono::nanoseconds gids_interval = std::chrono::seconds(60);
  /// --gpu-topology.nearest-only: only each netdev's nearest GPUs in roce_nic_gpu_topology
  bool gpu_nearest_only = false;
  /// --attribution.interval: QPs per owner on the selected netdevs' RDMA ports, on its own
  /// thread (docs/attribution.md); 0 = off (the default: it needs the host PID namespace)
  std::chrono::nanoseconds attribution_interval{0};
  /// --attribution.proc-root: procfs of the host PID namespace (/PID/cgroup of QP holders)
  std::string attribution_proc_root = "/proc";
  /// --attribution.pod-logs-root: the kubelet's pod log directories, for pod names
  std::string attribution_pod_logs_root = "/var/log/pods";
};

/// The window the shipped alert rules and dashboards read (`window="1m"`).
inline constexpr std::chrono::seconds kShippedRulesWindow{60};

/// Warnings about a valid configuration that silently disables shipped alerts or dashboards
/// (today: --derive.windows without 1m). main logs each at start; empty when nothing is wrong.
std::vector<std::string> ConfigWarnings(const Config& config);

/// Sampler options from a validated Config (regexes compiled; they compiled during parsing).
Result<SamplerOptions> MakeSamplerOptions(const Config& config);

}  // namespace roceqos
