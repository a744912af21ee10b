// roce_qos_exporter: parse flags, start the sampler and the HTTP endpoint, wait for SIGTERM/SIGINT.

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <system_error>

#include "base/log_event.h"
#include "collectors/kubelet/pod_resources.h"
#include "collectors/lldp/liblldpctl.h"
#include "collectors/roce_gids.h"
#include "exporter/app/capture.h"
#include "exporter/app/cli.h"
#include "exporter/app/enforcer_lock.h"
#include "exporter/app/qos_readers.h"
#include "exporter/app/storm_guard.h"
#include "exporter/app/storm_witness.h"
#include "exporter/app/systemd_notify.h"
#include "exporter/app/task_limits.h"
#include "exporter/app/write_facts_kernel.h"
#include "exporter/core/build_info.h"
#include "exporter/core/derived_signals.h"
#include "exporter/core/fault_log.h"
#include "exporter/core/logging.h"
#include "exporter/http/http_server.h"
#include "exporter/http/routes.h"
#include "exporter/qos/qos_engine.h"
#include "exporter/qos/qos_io.h"
#include "exporter/qos/qos_stage.h"
#include "exporter/qos/remediate.h"
#include "exporter/qos/switch_compare.h"
#include "exporter/render/exposition_cache.h"
#include "exporter/render/metrics.h"
#include "exporter/sampling/attribution_poller.h"
#include "exporter/sampling/gid_stage.h"
#include "exporter/sampling/link_poller.h"
#include "exporter/sampling/lldp_poller.h"
#include "exporter/sampling/pcie_poller.h"
#include "exporter/sampling/process_stage.h"
#include "exporter/sampling/sampler.h"
#include "exporter/sampling/transceiver_poller.h"
#include "exporter/signals/derive_stage.h"

namespace roceqos {
namespace {

// The HTTP routes (exporter/http/routes.h) over this process's sampler and QoS engine.
std::vector<HttpRoute> MakeRoutes(const Config& config, const Sampler& sampler,
                                  ExpositionCache& cache, QosEngine& qos) {
  return Routes(
      RouteOptions{.telemetry_path = config.telemetry_path,
                   .enable_lifecycle = config.enable_lifecycle,
                   .health_max_sample_age = config.health_max_sample_age,
                   .unhealthy_on_stale_lldpd_socket = config.lldp_unhealthy_on_stale_socket},
      cache, [&sampler] { return sampler.Latest(); }, [&qos] { return qos.ReloadPolicy(); });
}

// Blocks the termination signals before any thread exists, so every thread inherits the mask and
// only WaitForTermination() receives them.
sigset_t BlockSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // policy reload
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// The policy and remediation mode are checked before anything starts: a policy that does not
// validate, or enforce mode without the capability it needs, refuses to start.
// `enforcer` is the caller's: the lock must be held for the life of the process, not this call.
Result<std::unique_ptr<QosEngine>> MakeQosEngine(const Config& config, EnforcerLock& enforcer,
                                                 WriteFacts write_facts) {
  RemediationMode mode = config.remediation;
  if (mode == RemediationMode::kEnforce && !HasNetAdminCapability()) {
    return MakeError(
        EPERM,
        "--remediation=enforce needs CAP_NET_ADMIN (RTM_SETDCB is refused without it); run with "
        "the capability or use --remediation=dry-run");
  }
  // One enforcer per node; a second instance observes.
  bool enforce_held_elsewhere = false;
  Result<RemediationMode> claimed =
      ClaimEnforcement(config, mode, enforcer, enforce_held_elsewhere);
  Result<std::string> state_file =
      claimed ? RemediationStateFile(config, *claimed) : Result<std::string>(claimed.error());
  if (!state_file) return state_file.error();
  mode = *claimed;
  Result<std::shared_ptr<const PolicySet>> policy = LoadConfiguredPolicy(config);
  if (!policy) {
    return MakeError(EINVAL, "invalid QoS policy, not starting: " + policy.error().message);
  }
  Result<std::unique_ptr<KernelQosReader>> qos_reader = OpenQosReader(config);
  if (!qos_reader) return MakeError(EINVAL, "QoS reader: " + qos_reader.error().message);
  // The remediation worker reads and writes on its own thread, so through its own socket (a
  // netlink socket is not shared across threads). A replay opens a replayed one: it never writes,
  // and dry-run never reads.
  QosIo remediation_io;
  if (mode != RemediationMode::kOff) {
    Result<QosIo> io = OpenRemediationIo(config);
    if (!io) return MakeError(EINVAL, "remediation reader: " + io.error().message);
    remediation_io = std::move(*io);
  }
  QosEngineOptions qos_options;
  qos_options.config_path = config.config_path;
  // A replay's policy is the capture's: a reload reads it again, not a file of this host.
  if (config.policy_yaml)
    qos_options.policy_loader = [config] { return LoadConfiguredPolicy(config); };
  qos_options.poll_interval = config.qos_poll_interval;
  qos_options.dcqcn_poll_interval = config.qos_dcqcn_poll_interval;
  qos_options.remediation.mode = mode;
  qos_options.remediation.base_backoff = config.remediation_backoff;
  qos_options.remediation.max_backoff = config.remediation_max_backoff;
  qos_options.remediation.max_attempts = config.remediation_max_attempts;
  // The write gate wants storm evidence from a read no older than one sampler period.
  qos_options.remediation.storm_evidence_max_age = config.sampler_period;
  qos_options.remediation_state_file = *state_file;
  qos_options.write_facts = write_facts;
  qos_options.enforce_held_elsewhere = enforce_held_elsewhere;
  auto qos = std::make_unique<QosEngine>(qos_options, *policy, std::move(*qos_reader),
                                         std::move(remediation_io));
  LogEvent(spdlog::level::info, "QoS policy loaded",
           {{"source", (*policy)->source},
            {"device_rules", (*policy)->rules.size()},
            {"remediation", RemediationModeName(mode)}});
  return qos;
}

// An idle port's evidence is cleared by a read ending its gap and one a quiet span later, both
// within one wait of the gate (docs/signals.md "Storm guard").
StormWitnessOptions StormWitnessOptionsFor(const Config& config) {
  const StormConfig& storm = config.derive.storm;
  const std::chrono::nanoseconds span = std::max(storm.detection_time, storm.restoration_time);
  return {.max_wait = std::max<std::chrono::nanoseconds>(
              std::chrono::seconds(1),
              span + 2 * config.derive.max_read_gap + std::chrono::milliseconds(500))};
}

// The sampler's stages in order and its publish hook (sd_notify on every snapshot, and a wake-up
// of the render worker, which renders on its own thread).
void WireSampler(const Config& config, Sampler& sampler, QosEngine& qos, SystemdNotifier& notifier,
                 FaultLog& notify_log, RenderAheadThread& render_ahead) {
  sampler.AddStage(std::make_unique<DeriveStage>(config.derive));
  sampler.AddStage(std::make_unique<ProcessStage>());
  sampler.SetPublishHook([&notifier, &notify_log, &render_ahead](const Snapshot&) {
    render_ahead.Notify();
    if (Result<void> sent = notifier.SnapshotPublished(); !sent) {
      notify_log.Fault("sd_notify", "failed", sent.error().message);
    } else {
      notify_log.Ok("sd_notify");
    }
  });
  // After the derive stage, so the storm evidence of the same sample guards remediation: a device
  // is written only when its history shows no storm, never while one is possible but unseen
  // (just started, counters reset, no derived signals).
  sampler.AddStage(std::make_unique<QosStage>(&qos, StormGuardOf));
  // Not under --replay: the capture subcommand runs no GID stage, so its bundles hold no
  // RTM_GETADDR dump to answer from.
  if (config.gids_interval.count() != 0 && config.replay_path.empty())
    sampler.AddStage(MakeKernelGidStage(config.gids_interval, QosHostPaths(config).sysfs));
}

// The pollers (transceiver, LLDP) read the sampler's selection on their own threads and cadences;
// the sampler attaches their latest states to each snapshot (pointer copies, no kernel access).
// A replay answers from its bundle, which holds neither module pages nor lldpd: no pollers there
// but an lldpd named on purpose (MakeReplayPollers).
struct Pollers {
  std::unique_ptr<TransceiverPoller> transceivers;  // null with --transceiver.interval=0
  std::unique_ptr<LldpPoller> lldp;                 // null with --lldp.interval=0
  std::unique_ptr<LinkPoller> link;                 // null with --link.interval=0
  std::unique_ptr<PciePoller> pcie;                 // null with --pcie.interval=0
  std::unique_ptr<AttributionPoller> attribution;   // null with --attribution.interval=0

  void Start() {
    if (transceivers) transceivers->Start();
    if (lldp) lldp->Start();
    if (link) link->Start();
    if (pcie) pcie->Start();
    if (attribution) attribution->Start();
  }
  void Stop() {
    if (transceivers) transceivers->Stop();
    if (lldp) lldp->Stop();
    if (link) link->Stop();
    if (pcie) pcie->Stop();
    if (attribution) attribution->Stop();
  }
};

std::function<std::vector<std::string>()> SelectedNetdevs(Sampler& sampler) {
  return [&sampler] {
    // The first round waits for the first sample's selection instead of reading nothing.
    (void)sampler.WaitForSequence(1, std::chrono::steady_clock::now() + std::chrono::seconds(30));
    std::vector<std::string> names;
    if (std::shared_ptr<const Snapshot> latest = sampler.Latest()) {
      for (const DeviceSnapshot& d : latest->devices) {
        if (d.device) names.push_back(d.device->name);
      }
    }
    return names;
  };
}

// The RoCE GID tables of the asked netdevs, through the RDMA ports the last sample's devices
// are bound to; a netdev that left the selection is left out (unknown).
LldpPoller::RoceGidReader SelectedRoceGids(Sampler& sampler, std::string sysfs_root) {
  return [&sampler, sysfs_root = std::move(sysfs_root)](const std::vector<std::string>& netdevs) {
    std::map<std::string, NetdevRoceGids> gids;
    std::shared_ptr<const Snapshot> latest = sampler.Latest();
    if (!latest) return gids;
    for (const DeviceSnapshot& d : latest->devices) {
      if (d.device && std::find(netdevs.begin(), netdevs.end(), d.device->name) != netdevs.end())
        gids.emplace(d.device->name, ReadNetdevRoceGids(sysfs_root, d.device->rdma_ports));
    }
    return gids;
  };
}

// rx_corrected_bits_phy and rx_bits_phy of the last sample's devices that have both, for the
// link poller's pre-FEC BER.
LinkPoller::BitCounts SelectedPhyBits(Sampler& sampler) {
  return [&sampler] {
    std::map<std::string, PhyBitCounts> bits;
    std::shared_ptr<const Snapshot> latest = sampler.Latest();
    if (!latest) return bits;
    for (const DeviceSnapshot& d : latest->devices) {
      if (!d.device || !d.ethtool || !d.ethtool->link_names) continue;
      const LinkEthtoolNames& names = *d.ethtool->link_names;
      const std::vector<uint64_t>& values = d.ethtool->counters.values;
      if (!names.corrected_bits || !names.received_bits) continue;
      if (*names.corrected_bits >= values.size() || *names.received_bits >= values.size()) continue;
      bits[d.device->name] = {values[*names.corrected_bits], values[*names.received_bits]};
    }
    return bits;
  };
}

// The RDMA ports bound to the last sample's devices, each under its netdev (a LAG port under the
// bond and each selected slave: Device::rdma_ports).
AttributionPoller::Targets SelectedRdmaPorts(Sampler& sampler) {
  return [&sampler] {
    (void)sampler.WaitForSequence(1, std::chrono::steady_clock::now() + std::chrono::seconds(30));
    std::vector<AttributionTarget> targets;
    if (std::shared_ptr<const Snapshot> latest = sampler.Latest()) {
      for (const DeviceSnapshot& d : latest->devices) {
        if (!d.device) continue;
        for (const RdmaPort& port : d.device->rdma_ports) {
          targets.push_back(
              {d.device->name, port.device, port.device_index, port.port, d.device->pci_address});
        }
      }
    }
    return targets;
  };
}

// The kubelet's PodResources List as the attribution poller's device source (docs/kubelet.md):
// one List per round, on the poller's thread; a device ID that is a VF's PCI address is followed
// to its PF in sysfs (one readlink per VF).
AttributionPoller::PodDeviceSource KubeletDevices(const std::string& socket,
                                                  const std::string& sysfs_root) {
  std::shared_ptr<kubelet::PodResourcesSource> source = kubelet::MakeKubeletSource(socket);
  return [source, sysfs_root]() -> Result<std::vector<PodDevice>> {
    Result<kubelet::PodResourcesList> list = source->List();
    if (!list) return list.error();
    std::vector<PodDevice> devices;
    for (kubelet::AllocatedDevice& d : kubelet::AllocatedDevices(*list)) {
      std::optional<std::string> vf = kubelet::PciAddressOfDeviceId(d.device_id);
      std::optional<std::string> pf = vf ? kubelet::VfPhysfnAddress(sysfs_root, *vf) : std::nullopt;
      devices.push_back({std::move(d.namespace_name), std::move(d.pod), std::move(d.resource_name),
                         std::move(d.device_id), pf.value_or("")});
    }
    return devices;
  };
}

// Each snapshot carries the pollers' latest states; a replay's too (its lldpd's neighbours). The
// host-vs-switch comparison needs both the QoS stage's state and the LLDP state it is attached
// with, so it is computed here, again only when one of them changes, and /metrics only formats it.
void AttachPollers(const Pollers& pollers, Sampler& sampler) {
  sampler.SetAttachHook([t = pollers.transceivers.get(), l = pollers.lldp.get(),
                         k = pollers.link.get(), p = pollers.pcie.get(),
                         a = pollers.attribution.get(),
                         comparer = std::make_shared<SwitchComparer>()](Snapshot& draft) {
    if (t) draft.transceivers = t->Latest();
    if (l) {
      draft.lldp = l->Latest();
      comparer->Compare(draft);
    }
    if (k) draft.links = k->Latest();
    if (p) draft.pcie = p->Latest();
    if (a) draft.attribution = a->Latest();
  });
}

// Under --replay only an lldpd named by --lldp.socket is read: the bundle holds none, and the
// host's own lldpd (the default socket) describes another machine's cabling. The fleet bench
// (bench/fleet/run) gives each replayed node its own lldpd and switch in network namespaces.
Pollers MakeReplayPollers(const Config& config, Sampler& sampler) {
  Pollers pollers;
  if (config.lldp_interval.count() != 0 && !config.lldp_socket.empty()) {
    pollers.lldp = std::make_unique<LldpPoller>(
        LldpPollerOptions{.interval = config.lldp_interval,
                          .query = {.socket_path = config.lldp_socket}},
        SelectedNetdevs(sampler));
  }
  AttachPollers(pollers, sampler);
  return pollers;
}

Pollers MakePollers(const Config& config, Sampler& sampler) {
  if (!config.replay_path.empty()) return MakeReplayPollers(config, sampler);
  Pollers pollers;
  if (config.transceiver_interval.count() != 0) {
    pollers.transceivers = std::make_unique<TransceiverPoller>(
        TransceiverPollerOptions{.interval = config.transceiver_interval,
                                 .serial_numbers = config.transceiver_serial},
        MakeKernelTransceiverIo(), SelectedNetdevs(sampler));
  }
  if (config.lldp_interval.count() != 0) {
    pollers.lldp = std::make_unique<LldpPoller>(
        LldpPollerOptions{.interval = config.lldp_interval,
                          .query = {.socket_path = config.lldp_socket}},
        SelectedNetdevs(sampler));
    pollers.lldp->SetRoceGidReader(SelectedRoceGids(sampler, QosHostPaths(config).sysfs));
  }
  if (config.link_interval.count() != 0) {
    pollers.link = std::make_unique<LinkPoller>(LinkPollerOptions{.interval = config.link_interval},
                                                MakeKernelLinkStatsIo(), SelectedNetdevs(sampler),
                                                SelectedPhyBits(sampler));
  }
  if (config.pcie_interval.count() != 0) {
    pollers.pcie =
        std::make_unique<PciePoller>(PciePollerOptions{.interval = config.pcie_interval,
                                                       .sysfs_root = QosHostPaths(config).sysfs,
                                                       .gpu_nearest_only = config.gpu_nearest_only},
                                     SelectedNetdevs(sampler));
  }
  if (config.attribution_interval.count() != 0) {
    pollers.attribution = std::make_unique<AttributionPoller>(
        AttributionPollerOptions{.interval = config.attribution_interval},
        MakeKernelAttributionIo(config.attribution_proc_root, config.attribution_pod_logs_root),
        SelectedRdmaPorts(sampler));
    if (!config.attribution_kubelet_socket.empty()) {
      pollers.attribution->SetPodDeviceSource(
          KubeletDevices(config.attribution_kubelet_socket, QosHostPaths(config).sysfs));
    }
  }
  AttachPollers(pollers, sampler);
  return pollers;
}

// Waits for SIGTERM/SIGINT (SIGHUP reloads the policy); says so once if the first sample takes
// unusually long. Returns the signal that ends the exporter.
int WaitForTermination(const sigset_t& signals, const Sampler& sampler, QosEngine& qos) {
  const timespec first_sample_deadline{30, 0};
  bool warned_first_sample = false;
  for (;;) {
    const int received = warned_first_sample
                             ? sigwaitinfo(&signals, nullptr)
                             : sigtimedwait(&signals, nullptr, &first_sample_deadline);
    if (received < 0) {
      if (errno == EAGAIN && !warned_first_sample) {
        warned_first_sample = true;
        if (!sampler.Latest()) {
          LogEvent(spdlog::level::warn,
                   "no sample published yet; /-/ready answers 503 until one is",
                   {{"waited_seconds", 30}});
        }
      }
      continue;
    }
    if (received != SIGHUP) return received;
    LogEvent(spdlog::level::info, "reloading the QoS policy", {{"signal", "SIGHUP"}});
    (void)qos.ReloadPolicy();  // logs and exports its own outcome
  }
}

void LogListening(const Config& config, const HttpServer& server) {
  std::string ports;
  for (int port : server.ListeningPorts()) {
    ports += (ports.empty() ? "" : ",") + std::to_string(port);
  }
  LogEvent(spdlog::level::info, "listening",
           {{"address", config.listen_address},
            {"ports", ports},
            {"telemetry_path", config.telemetry_path}});
}

// The stop begins: the log says why, and systemd hears of it (a failure to tell it is logged).
void LogShutdown(int received_signal, SystemdNotifier& notifier) {
  LogEvent(spdlog::level::info, "shutting down",
           {{"signal", received_signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
  if (Result<void> stopping = notifier.Stopping(); !stopping) {
    LogEvent(spdlog::level::warn, "cannot notify systemd of the stop",
             {{"error", stopping.error().message}});
  }
}

int RunExporter(const Config& config) {
  const sigset_t signals = BlockSignals();
  LogEvent(spdlog::level::info, "starting roce_qos_exporter",
           {{"version", kVersion}, {"revision", kGitRevision}});
  Result<SamplerOptions> options = MakeSamplerOptions(config);
  if (!options) {
    LogEvent(spdlog::level::err, "invalid configuration", {{"error", options.error().message}});
    return 1;
  }
  EnforcerLock enforcer;  // held until the process exits
  // The write gate's facts; the storm evidence is bound once the sampler exists.
  KernelWriteFacts write_facts{
      KernelDeviceResolver(QosHostPaths(config).sysfs), KernelLockWitness(&enforcer), {}};
  Result<std::unique_ptr<QosEngine>> qos = MakeQosEngine(config, enforcer, write_facts.Facts());
  if (!qos) {
    LogEvent(spdlog::level::err, "cannot start the QoS engine", {{"error", qos.error().message}});
    return 1;
  }
  SystemdNotifier notifier;  // before the sampler thread starts (reads the environment)
  FaultLog notify_log;       // only touched on the sampler thread
  Sampler sampler(std::move(options.value()), MakeKernelSources());
  SamplerStormWitness storm_witness(sampler, StormWitnessOptionsFor(config));
  write_facts.storm.Bind(&storm_witness);
  HttpCounters http_counters;
  ExpositionCache cache([&sampler] { return sampler.Latest(); },
                        [&http_counters] { return http_counters.Read(); });
  RenderAheadThread render_ahead(cache);
  WireSampler(config, sampler, **qos, notifier, notify_log, render_ahead);
  Pollers pollers = MakePollers(config, sampler);
  // A DCB notification wakes the sampler at once: detection well under one period.
  QosMonitorThread qos_monitor(qos->get(), [&sampler](const QosEngine::ChangeResponse& change) {
    sampler.Wake(change.discovery, change.dcb_changed);
  });
  Result<std::unique_ptr<HttpServer>> server =
      HttpServer::Start(HttpOptions{.listen_address = config.listen_address,
                                    .max_connections = config.max_connections,
                                    .max_requests = config.max_requests},
                        MakeRoutes(config, sampler, cache, **qos), &http_counters);
  if (!server) {
    // Before the sampler starts: a port in use fails fast, without touching any device.
    const Error& e = server.error();
    LogEvent(spdlog::level::err, "cannot start the HTTP server",
             {{"error", e.errnum == EAGAIN ? ThreadLimitMessage(e.message) : e.message}});
    return 1;
  }
  render_ahead.Start();
  sampler.Start();
  pollers.Start();
  qos_monitor.Start();
  LogListening(config, **server);
  LogShutdown(WaitForTermination(signals, sampler, **qos), notifier);
  server->reset();  // no scrape in flight while the sampler stops
  qos_monitor.Stop();
  pollers.Stop();  // before the sampler their attach hook points into
  sampler.Stop();
  render_ahead.Stop();  // after the sampler, whose publish hook wakes it
  // After the sampler, which posts its passes: waits for the device step under way, if any.
  (*qos)->Stop();
  LogEvent(spdlog::level::info, "stopped", {});
  return 0;
}
}  // namespace
}  // namespace roceqos

int main(int argc, char** argv) {
  using namespace roceqos;
  try {
    CliOutcome cli = ParseCommandLine(std::span<const char* const>(argv, static_cast<size_t>(argc)),
                                      std::cout, std::cerr);
    if (cli.kind == CliOutcome::Kind::kExit) return cli.exit_code;
    if (auto logging = SetupLogging(cli.config.log_level, cli.config.log_format); !logging) {
      std::cerr << "roce_qos_exporter: " << logging.error().message << "\n";
      return kExitUsage;
    }
    // Before anything loads liblldpctl (the LLDP poller, check's switch items).
    if (!cli.config.lldp_library.empty()) lldp::UseLldpctlLibrary(cli.config.lldp_library);
    if (!cli.config.replay_path.empty()) {
      if (int replay = StartReplayFrom(cli.config, std::cerr); replay != 0) return replay;
    }
    if (cli.kind == CliOutcome::Kind::kSubcommand)
      return cli.subcommand(cli.config, std::cout, std::cerr);
    for (const std::string& warning : ConfigWarnings(cli.config))
      LogEvent(spdlog::level::warn, "configuration warning", {{"warning", warning}});
    return RunExporter(cli.config);
  } catch (const std::system_error& e) {
    // std::thread's constructor: EAGAIN from pthread_create is a task limit, named here.
    const bool task_limit = e.code() == std::errc::resource_unavailable_try_again;
    std::fprintf(stderr, "roce_qos_exporter: fatal: %s\n",
                 task_limit ? ThreadLimitMessage(e.what()).c_str() : e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roce_qos_exporter: fatal: %s\n", e.what());
    return 1;
  }
}
