// roce_qos_exporter: parse flags, start the sampler and the HTTP endpoint, wait for SIGTERM/SIGINT.

#include <fmt/format.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>

#include "exporter/core/build_info.h"
#include "exporter/app/cli.h"
#include "exporter/app/enforcer_lock.h"
#include "exporter/signals/derive_stage.h"
#include "exporter/signals/derived_signals.h"
#include "exporter/core/fault_log.h"
#include "exporter/app/http_server.h"
#include "exporter/core/logging.h"
#include "exporter/render/metrics.h"
#include "exporter/qos/qos_engine.h"
#include "exporter/qos/qos_io.h"
#include "exporter/qos/qos_stage.h"
#include "exporter/qos/remediate.h"
#include "exporter/sampling/sampler.h"
#include "exporter/app/systemd_notify.h"

namespace roceqos {
namespace {

constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string LandingPage(const Config& config) {
  return fmt::format(
      "<html><head><title>roce_qos_exporter</title></head><body><h1>roce_qos_exporter</h1>"
      "<p>version {} (revision {})</p><ul><li><a href=\"{}\">{}</a></li>"
      "<li><a href=\"/-/healthy\">/-/healthy</a></li><li><a href=\"/-/ready\">/-/ready</a></li>"
      "</ul></body></html>\n",
      kVersion, kGitRevision, config.telemetry_path, config.telemetry_path);
}

std::vector<HttpRoute> Routes(const Config& config, const Sampler& sampler,
                              const SnapshotCollectable& collectable, QosEngine& qos) {
  std::vector<HttpRoute> routes;
  routes.push_back({"/-/reload", {"POST"}, [&qos](const HttpRequest&) {
                      HttpResponse r;
                      if (Result<void> reloaded = qos.ReloadPolicy(); reloaded) {
                        r.body = "policy reloaded\n";
                      } else {
                        // The last good policy stays in force; say why the new one was refused.
                        r.status = 500;
                        r.body = "policy rejected, the last good policy stays in force: " +
                                 reloaded.error().message + "\n";
                      }
                      return r;
                    }});
  routes.push_back({config.telemetry_path, {"GET"}, [&collectable](const HttpRequest&) {
                      std::ostringstream body;
                      prometheus::TextSerializer().Serialize(body, collectable.Collect());
                      HttpResponse r;
                      r.content_type = kMetricsContentType;
                      r.body = std::move(body).str();
                      return r;
                    }});
  routes.push_back({"/-/healthy", {"GET"}, [](const HttpRequest&) {
                      HttpResponse r;
                      r.body = "OK\n";
                      return r;
                    }});
  routes.push_back({"/-/ready", {"GET"}, [&sampler](const HttpRequest&) {
                      HttpResponse r;
                      if (sampler.Latest()) {
                        r.body = "OK\n";
                      } else {
                        r.status = 503;
                        r.body = "no sample published yet\n";
                      }
                      return r;
                    }});
  routes.push_back({"/", {"GET"}, [&config](const HttpRequest&) {
                      HttpResponse r;
                      r.content_type = "text/html; charset=utf-8";
                      r.body = LandingPage(config);
                      return r;
                    }});
  return routes;
}

int RunExporter(const Config& config) {
  // Block the termination signals before any thread exists, so every thread inherits the mask
  // and only sigwait() below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // policy reload
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  spdlog::info("starting roce_qos_exporter version {} (revision {})", kVersion, kGitRevision);
  Result<SamplerOptions> options = MakeSamplerOptions(config);
  Result<std::string> listen = CivetListeningPorts(config.listen_address);
  if (!options || !listen) {
    spdlog::error("{}", !options ? options.error().message : listen.error().message);
    return 1;
  }
  // The policy and remediation mode are checked before anything starts: a policy that does not
  // validate, or enforce mode without the capability it needs, refuses to start.
  Result<RemediationMode> mode = ParseRemediationMode(config.remediation);
  if (!mode) {
    spdlog::error("{}", mode.error().message);
    return 1;
  }
  if (*mode == RemediationMode::kEnforce && !HasNetAdminCapability()) {
    spdlog::error(
        "--remediation=enforce needs CAP_NET_ADMIN (RTM_SETDCB is refused without it); run with "
        "the capability or use --remediation=dry-run");
    return 1;
  }
  // One enforcer per node: held until the process exits; a second instance observes.
  EnforcerLock enforcer;
  bool enforce_held_elsewhere = false;
  Result<RemediationMode> claimed =
      ClaimEnforcement(config, *mode, enforcer, enforce_held_elsewhere);
  Result<std::string> state_file =
      claimed ? RemediationStateFile(config, *claimed) : Result<std::string>(claimed.error());
  if (!state_file) {
    spdlog::error("{}", state_file.error().message);
    return 1;
  }
  mode = *claimed;
  Result<std::shared_ptr<const PolicySet>> policy = LoadPolicy(config.config_path);
  if (!policy) {
    spdlog::error("invalid QoS policy, not starting: {}", policy.error().message);
    return 1;
  }
  Result<std::unique_ptr<KernelQosReader>> qos_reader =
      KernelQosReader::Open(HostPaths{}, config.qos_configfs_tos);
  if (!qos_reader) {
    spdlog::error("QoS reader: {}", qos_reader.error().message);
    return 1;
  }
  QosEngineOptions qos_options;
  qos_options.config_path = config.config_path;
  qos_options.poll_interval = config.qos_poll_interval;
  qos_options.remediation.mode = *mode;
  qos_options.remediation.base_backoff = config.remediation_backoff;
  qos_options.remediation.max_backoff = config.remediation_max_backoff;
  qos_options.remediation.max_attempts = config.remediation_max_attempts;
  qos_options.remediation_state_file = *state_file;
  qos_options.enforce_held_elsewhere = enforce_held_elsewhere;
  auto qos_writer = std::make_unique<KernelQosWriter>(qos_reader->get());
  QosEngine qos(qos_options, *policy, std::move(*qos_reader), std::move(qos_writer));
  spdlog::info("QoS policy: {} ({} device rule{}), remediation {}", (*policy)->source,
               (*policy)->rules.size(), (*policy)->rules.size() == 1 ? "" : "s",
               RemediationModeName(*mode));

  SystemdNotifier notifier;  // before the sampler thread starts (reads the environment)
  FaultLog notify_log;       // only touched on the sampler thread
  Sampler sampler(std::move(options.value()), MakeKernelSources());
  sampler.AddStage(std::make_unique<DeriveStage>(config.derive));
  sampler.SetPublishHook([&notifier, &notify_log](const Snapshot&) {
    if (Result<void> sent = notifier.SnapshotPublished(); !sent) {
      notify_log.Fault("sd_notify", "failed", sent.error().message);
    } else {
      notify_log.Ok("sd_notify");
    }
  });
  // After the derive stage, so the storm state of the same sample guards remediation: a device in
  // an active PFC storm is never written.
  sampler.AddStage(std::make_unique<QosStage>(&qos, [](const DeviceSnapshot& device) {
    return device.derived && device.derived->signals.AnyStorm();
  }));
  // A DCB notification wakes the sampler at once: detection well under one period.
  QosMonitorThread qos_monitor(&qos, [&sampler](const QosEngine::ChangeResponse& change) {
    sampler.Wake(change.discovery, change.dcb_changed);
  });
  SnapshotCollectable collectable([&sampler] { return sampler.Latest(); });

  Result<std::unique_ptr<HttpServer>> server = HttpServer::Start(
      HttpOptions{.listening_ports = *listen}, Routes(config, sampler, collectable, qos));
  if (!server) {
    // Before the sampler starts: a port in use fails fast, without touching any device.
    spdlog::error("{}", server.error().message);
    return 1;
  }
  sampler.Start();
  qos_monitor.Start();
  std::string ports;
  for (int port : (*server)->ListeningPorts()) {
    ports += (ports.empty() ? "" : ",") + std::to_string(port);
  }
  spdlog::info("listening on {} (port {}), metrics at {}", config.listen_address, ports,
               config.telemetry_path);

  // Wait for SIGTERM/SIGINT (SIGHUP reloads the policy); say so once if the first sample takes
  // unusually long.
  const timespec first_sample_deadline{30, 0};
  bool warned_first_sample = false;
  int received = -1;
  for (;;) {
    received = warned_first_sample ? sigwaitinfo(&signals, nullptr)
                                   : sigtimedwait(&signals, nullptr, &first_sample_deadline);
    if (received < 0) {
      if (errno == EAGAIN && !warned_first_sample) {
        warned_first_sample = true;
        if (!sampler.Latest()) {
          spdlog::warn("no sample published within 30s; /-/ready answers 503 until one is");
        }
      }
      continue;
    }
    if (received == SIGHUP) {
      spdlog::info("received SIGHUP, reloading the QoS policy");
      (void)qos.ReloadPolicy();  // logs and exports its own outcome
      continue;
    }
    break;
  }
  spdlog::info("received {}, shutting down", received == SIGTERM ? "SIGTERM" : "SIGINT");
  if (Result<void> stopping = notifier.Stopping(); !stopping) {
    spdlog::warn("{}", stopping.error().message);
  }
  server->reset();  // no scrape in flight while the sampler stops
  qos_monitor.Stop();
  sampler.Stop();
  spdlog::info("stopped");
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
    if (cli.kind == CliOutcome::Kind::kSubcommand)
      return cli.subcommand(cli.config, std::cout, std::cerr);
    for (const std::string& warning : ConfigWarnings(cli.config)) spdlog::warn("{}", warning);
    return RunExporter(cli.config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roce_qos_exporter: fatal: %s\n", e.what());
    return 1;
  }
}
