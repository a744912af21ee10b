#include "exporter/app/subcommands.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/app/capture.h"
#include "exporter/app/check.h"
#include "exporter/app/config.h"
#include "exporter/app/policy_validate.h"

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

// The daemon's flags that `check` reads (CheckOptionsFromConfig), with what each does there. They
// belong to the top-level app, so CLI11 would list them only under `roce_qos_exporter --help`;
// `check --help` lists them in its footer, under the names and value types the parser knows.
struct SharedFlag {
  std::string_view name;
  std::string_view for_check;
};
constexpr SharedFlag kCheckFlags[] = {
    {"--config", "Policy file to check against (default: the embedded default policy)"},
    {"--collector.device-include", "Regex of netdevs to check, as the daemon selects them"},
    {"--collector.device-exclude", "Regex of netdevs never to check"},
    {"--replay", "Check the node recorded in this capture bundle instead of this one"},
    {"--lldp.socket", "lldpd's control socket, for the switch items"},
    {"--lldp.library", "liblldpctl to load instead of liblldpctl.so.4 (the host lldpd's own)"},
    {"--lldp.interval", "0: no switch items (lldpd is not asked)"},
    {"--qos.configfs-tos", "Read the RoCE ToS from rdma_cm configfs (creates the directory)"},
    {"--path.procfs", "procfs mount point (net.ipv4.tcp_ecn)"},
    {"--path.debugfs", "debugfs mount point (the inbox mlx5 driver's DCQCN cc_params)"},
    {"--log.level", "Minimum level logged on stderr (default for check: warn)"},
    {"--log.format", "Log line format on stderr"},
};

std::string CheckFlagsFooter(const CLI::App& app) {
  std::string text = "Flags of the daemon that check reads too (before or after `check`):\n";
  for (const SharedFlag& flag : kCheckFlags) {
    const CLI::Option* option = app.get_option_no_throw(std::string(flag.name));
    if (option == nullptr) continue;  // tests/integration/cli_surface.sh expects every one listed
    std::string usage = std::string(flag.name);
    if (option->get_type_size() != 0) {
      const std::string type = option->get_type_name();  // "TEXT:{a,b}" with a set of values
      usage += " " + type.substr(0, type.find(':'));
    }
    text += fmt::format("  {:<36} {}\n", usage, flag.for_check);
  }
  return text;
}

// CLI11 2.1 lists every positional in the usage line, a hidden one as "[]"; `policy` has one only
// to name a mistyped subcommand. Hidden positionals are left out, and a subcommand an app cannot
// do without (`policy` without one is an error) is shown as required.
class UsageFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = get_label("Usage") + ":" + (name.empty() ? "" : " ") + name;
    if (!app->get_options([](const CLI::Option* o) { return o->nonpositional(); }).empty())
      usage += " [" + get_label("OPTIONS") + "]";
    for (const CLI::Option* positional :
         app->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
      if (!positional->get_group().empty()) usage += " " + make_option_usage(positional);
    }
    if (!app->get_subcommands([](const CLI::App* sub) { return !sub->get_disabled(); }).empty())
      usage += " " + get_label("SUBCOMMAND");
    return usage + "\n";
  }
};

void RegisterPolicy(CLI::App& app, SubcommandRun& selected) {
  CLI::App* policy = app.add_subcommand("policy", "Policy helpers");
  policy->formatter(std::make_shared<UsageFormatter>());
  policy->fallthrough();
  // Words that are not a policy subcommand land here (hidden), so the error can name the first
  // (a typo, and whatever followed it); CLI11's require_subcommand would only say "A subcommand is
  // required".
  auto unknown = std::make_shared<std::vector<std::string>>();
  policy->add_option("unknown", *unknown)->group("");
  policy->callback([policy, unknown] {
    if (!unknown->empty()) {
      throw CLI::ValidationError(
          "policy", fmt::format("unknown subcommand \"{}\" (known: show-default, validate)",
                                unknown->front()));
    }
    if (policy->get_subcommands().empty()) {
      throw CLI::ValidationError("policy",
                                 "a subcommand is required (known: show-default, validate)");
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

  CLI::App* validate = policy->add_subcommand(
      "validate",
      "Check policy files as the daemon would load them, with no device and no kernel access: "
      "print OK (and warnings, e.g. a rule that can never apply) and exit 0, or each file's "
      "first error with its line and column and exit 1 (docs/policy.md)");
  validate->fallthrough();
  auto files = std::make_shared<std::vector<std::string>>();
  validate->add_option("FILE", *files, "Policy file (YAML)")->required();
  validate->callback([&selected, files] {
    selected = [files](const Config&, std::ostream& out, std::ostream& err) {
      int status = kPolicyValid;
      for (const std::string& file : *files) {
        if (RunPolicyValidate(file, out, err) != kPolicyValid) status = kPolicyInvalid;
      }
      return status;
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
  options.paths.debugfs = config.debugfs_path;
  // A replay answers from its bundle, which holds no lldpd: no switch items there.
  options.lldp = config.lldp_interval.count() != 0 && config.replay_path.empty();
  options.lldp_query.socket_path = config.lldp_socket;
  // Nor addresses: the GID items need a live RTM_GETADDR dump.
  options.gids = config.gids_interval.count() != 0 && config.replay_path.empty();
  return options;
}

void RegisterSubcommands(CLI::App& app, SubcommandRun& selected) {
  CLI::App* check = app.add_subcommand(
      "check",
      "Check every selected device against the QoS policy (--config or the embedded default) and "
      "print expected vs actual per item; exit 0 in sync, 1 drift, 2 error or nothing selected");
  check->fallthrough();
  check->footer([&app] { return CheckFlagsFooter(app); });
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

  RegisterPolicy(app, selected);
}

}  // namespace roceqos
