#pragma once

#include <functional>
#include <iosfwd>
#include <span>
#include <string>

#include "exporter/app/config.h"

namespace roceqos {

/// A subcommand's body; gets the parsed global flags. Returns the process exit code.
using SubcommandRun =
    std::function<int(const Config& config, std::ostream& out, std::ostream& err)>;

struct CliOutcome {
  enum class Kind {
    kRunExporter,  // no subcommand: run the daemon with `config`
    kSubcommand,   // run `subcommand` with `config`, exit with its code
    kExit,         // --help, --version, --print-metrics-doc or a usage error: exit with exit_code
  };
  Kind kind = Kind::kExit;
  int exit_code = 0;
  Config config;
  SubcommandRun subcommand;
};

/// Exit code for usage errors (bad flag, bad value), as getopt-style tools use.
inline constexpr int kExitUsage = 2;

/// Parses the command line (CLI11). Help, version and the metrics doc go to `out`; a usage error
/// is one line "roce_qos_exporter: <what> (see --help)" on `err` with kExitUsage.
CliOutcome ParseCommandLine(std::span<const char* const> args, std::ostream& out,
                            std::ostream& err);

}  // namespace roceqos
