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

#include "exporter/build_info.h"
#include "exporter/cli.h"
#include "exporter/derive_stage.h"
#include "exporter/fault_log.h"
#include "exporter/http_server.h"
#include "exporter/logging.h"
#include "exporter/metrics.h"
#include "exporter/sampler.h"
#include "exporter/systemd_notify.h"

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
                              const SnapshotCollectable& collectable) {
  std::vector<HttpRoute> routes;
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
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  spdlog::info("starting roce_qos_exporter version {} (revision {})", kVersion, kGitRevision);
  Result<SamplerOptions> options = MakeSamplerOptions(config);
  Result<std::string> listen = CivetListeningPorts(config.listen_address);
  if (!options || !listen) {
    spdlog::error("{}", !options ? options.error().message : listen.error().message);
    return 1;
  }
  // TODO(qos): the policy engine replaces these two checks when it lands.
  if (config.remediation != "off") {
    spdlog::error("--remediation={}: the remediation engine is not built into this version",
                  config.remediation);
    return 1;
  }
  if (!config.config_path.empty()) {
    spdlog::info("policy file {} accepted; the policy engine is not built into this version",
                 config.config_path);
  }

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
  SnapshotCollectable collectable([&sampler] { return sampler.Latest(); });

  Result<std::unique_ptr<HttpServer>> server = HttpServer::Start(
      HttpOptions{.listening_ports = *listen}, Routes(config, sampler, collectable));
  if (!server) {
    // Before the sampler starts: a port in use fails fast, without touching any device.
    spdlog::error("{}", server.error().message);
    return 1;
  }
  sampler.Start();
  std::string ports;
  for (int port : (*server)->ListeningPorts()) {
    ports += (ports.empty() ? "" : ",") + std::to_string(port);
  }
  spdlog::info("listening on {} (port {}), metrics at {}", config.listen_address, ports,
               config.telemetry_path);

  // Wait for SIGTERM/SIGINT; say so once if the first sample takes unusually long.
  const timespec first_sample_deadline{30, 0};
  int received = -1;
  do {
    received = sigtimedwait(&signals, nullptr, &first_sample_deadline);
  } while (received < 0 && errno == EINTR);
  if (received < 0) {
    if (!sampler.Latest()) {
      spdlog::warn("no sample published within 30s; /-/ready answers 503 until one is");
    }
    while (sigwait(&signals, &received) != 0) {
    }
  }
  spdlog::info("received {}, shutting down", received == SIGTERM ? "SIGTERM" : "SIGINT");
  if (Result<void> stopping = notifier.Stopping(); !stopping) {
    spdlog::warn("{}", stopping.error().message);
  }
  server->reset();  // no scrape in flight while the sampler stops
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
    return RunExporter(cli.config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roce_qos_exporter: fatal: %s\n", e.what());
    return 1;
  }
}
