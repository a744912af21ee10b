#include "exporter/app/subcommands.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <ostream>

#include "exporter/app/capture.h"
#include "exporter/app/check.h"
#include "exporter/app/config.h"

namespace roceqos {
namespace {

void RegisterCapture(CLI::App& app, SubcommandRun& selected) {
  CLI::App* capture = app.add_subcommand(
      "capture",
      "Record everything the exporter reads on this node (netlink, ethtool, sysfs) into one "
      "bundle for a bug report or a regression test (docs/capture.md); replay it with --replay");
  capture->fallthrough();
  auto options = std::make_shared<CaptureOptions>();
  capture->add_option("--output", options->output, "Bundle to write (\"-\": standard output)")
      ->required();
  capture->add_option("--samples", options->samples, "Sampler passes, one period apart")
      ->capture_default_str();
  capture->callback([&selected, options] {
    selected = [options](const Config& config, std::ostream& out, std::ostream& err) {
      return RunCapture(config, *options, out, err);
    };
  });
}

}  // namespace

Result<CheckOptions> CheckOptionsFromConfig(const Config& config) {
  Result<SamplerOptions> sampler = MakeSamplerOptions(config);
  if (!sampler) return sampler.error();
  CheckOptions options;
  options.config_path = config.config_path;
  options.policy_yaml = config.policy_yaml;
  options.selection.include = sampler->device_include;
  options.selection.exclude = sampler->device_exclude;
  options.selection.include_text = config.device_include.value_or("");
  options.selection.exclude_text = config.device_exclude.value_or("");
  options.configfs_tos = config.qos_configfs_tos;
  options.paths.procfs = config.procfs_path;
  // A replay answers from its bundle, which holds no lldpd: no switch items there.
  options.lldp = config.lldp_interval.count() != 0 && config.replay_path.empty();
  options.lldp_query.socket_path = config.lldp_socket;
  return options;
}

void RegisterSubcommands(CLI::App& app, SubcommandRun& selected) {
  CLI::App* check = app.add_subcommand(
      "check",
      "Check every selected device against the QoS policy (--config or the embedded default) and "
      "print expected vs actual per item; exit 0 in sync, 1 drift, 2 error or nothing selected");
  check->fallthrough();
  auto netdevs = std::make_shared<std::vector<std::string>>();
  check->add_option("--netdev", *netdevs,
                    "Check this netdev (repeatable) instead of the daemon's device selection");
  auto json = std::make_shared<bool>(false);
  check->add_flag("--json", *json, "Print the report as JSON (schema_version 1, docs/check.md)");
  check->callback([&selected, netdevs, json] {
    selected = [netdevs, json](const Config& config, std::ostream& out, std::ostream& err) {
      Result<CheckOptions> options = CheckOptionsFromConfig(config);
      if (!options) {
        err << "roce_qos_exporter check: " << options.error().message << "\n";
        return kCheckError;
      }
      options->selection.netdevs = *netdevs;
      options->json = *json;
      options->color = &out == &std::cout && ::isatty(STDOUT_FILENO);
      return RunCheck(*options, out, err);
    };
  });

  RegisterCapture(app, selected);

  CLI::App* policy = app.add_subcommand("policy", "Policy helpers");
  policy->fallthrough();
  // A word that is not a policy subcommand lands here (hidden), so the error can name it; CLI11's
  // require_subcommand would only say "A subcommand is required" for a typo.
  auto unknown = std::make_shared<std::string>();
  policy->add_option("unknown", *unknown)->group("");
  policy->callback([policy, unknown] {
    if (!unknown->empty()) {
      throw CLI::ValidationError(
          "policy", fmt::format("unknown subcommand \"{}\" (known: show-default)", *unknown));
    }
    if (policy->get_subcommands().empty()) {
      throw CLI::ValidationError("policy", "a subcommand is required (known: show-default)");
    }
  });
  CLI::App* show_default =
      policy->add_subcommand("show-default", "Print the embedded default policy as YAML");
  show_default->fallthrough();
  show_default->callback([&selected] {
    selected = [](const Config&, std::ostream& out, std::ostream&) {
      return RunPolicyShowDefault(out);
    };
  });
}

}  // namespace roceqos
