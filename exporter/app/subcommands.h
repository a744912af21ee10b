#pragma once

// Subcommands are registered here, away from the daemon flags in cli.cc, so the policy work can
// add and implement them without touching the flag parser.

#include "exporter/app/check.h"
#include "exporter/app/cli.h"

namespace CLI {
class App;
}

namespace roceqos {

/// Adds every subcommand to `app`. A subcommand that the user selects stores its body in
/// `selected` (from a CLI11 callback), which the caller runs after parsing.
void RegisterSubcommands(CLI::App& app, SubcommandRun& selected);

/// The options of `check` that follow the daemon's flags: the policy, the device selection (the
/// daemon's own regexes, so check selects what the daemon samples), paths and LLDP. An Error for a
/// bad regex. `capture` uses it too, so its recorded check is the one `check` would run.
Result<CheckOptions> CheckOptionsFromConfig(const Config& config);

}  // namespace roceqos
