#include "exporter/subcommands.h"

#include <CLI/CLI.hpp>
#include <ostream>

namespace roceqos {
namespace {

// Reserved for the policy engine (QoS work): the names and their place in the CLI are fixed so
// deploy files and docs can rely on them; the bodies are not implemented in this build yet and
// say so instead of pretending to succeed.
int NotImplemented(std::string_view what, std::ostream& err) {
  err << "roce_qos_exporter: " << what << ": not implemented in this build (the policy engine is "
      << "not built in yet)\n";
  return 1;
}

}  // namespace

void RegisterSubcommands(CLI::App& app, SubcommandRun& selected) {
  CLI::App* check = app.add_subcommand(
      "check", "Validate the flags and the policy file (--config) and exit 0 if they are valid");
  check->fallthrough();
  check->callback([&selected] {
    selected = [](const Config&, std::ostream&, std::ostream& err) {
      return NotImplemented("check", err);
    };
  });

  CLI::App* policy = app.add_subcommand("policy", "Policy helpers");
  policy->fallthrough();
  policy->require_subcommand(1);
  CLI::App* show_default =
      policy->add_subcommand("show-default", "Print the embedded default policy as YAML");
  show_default->fallthrough();
  show_default->callback([&selected] {
    selected = [](const Config&, std::ostream&, std::ostream& err) {
      return NotImplemented("policy show-default", err);
    };
  });
}

}  // namespace roceqos
