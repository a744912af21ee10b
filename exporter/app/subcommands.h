#pragma once

// Subcommands are registered here, away from the daemon flags in cli.cc, so the policy work can
// add and implement them without touching the flag parser.

#include "exporter/app/cli.h"

namespace CLI {
class App;
}

namespace roceqos {

/// Adds every subcommand to `app`. A subcommand that the user selects stores its body in
/// `selected` (from a CLI11 callback), which the caller runs after parsing.
void RegisterSubcommands(CLI::App& app, SubcommandRun& selected);

}  // namespace roceqos
