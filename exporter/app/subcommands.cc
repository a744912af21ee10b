#include "exporter/app/subcommands.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <ostream>

#include "exporter/app/check.h"

namespace roceqos {

void RegisterSubcommands(CLI::App& app, SubcommandRun& selected) {
  CLI::App* check = app.add_subcommand(
      "check",
      "Check every selected device against the QoS policy (--config or the embedded default) and "
      "print expected vs actual per field; exit 0 in sync, 1 drift, 2 error");
  check->fallthrough();
  auto netdevs = std::make_shared<std::vector<std::string>>();
  check->add_option("--netdev", *netdevs,
                    "Check this netdev (repeatable) instead of the default device selection");
  check->callback([&selected, netdevs] {
    selected = [netdevs](const Config& config, std::ostream& out, std::ostream& err) {
      CheckOptions options;
      options.config_path = config.config_path;
      options.netdevs = *netdevs;
      options.configfs_tos = config.qos_configfs_tos;
      options.color = &out == &std::cout && ::isatty(STDOUT_FILENO);
      return RunCheck(options, out, err);
    };
  });

  CLI::App* policy = app.add_subcommand("policy", "Policy helpers");
  policy->fallthrough();
  policy->require_subcommand(1);
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
