#pragma once

// ParseCommandLine as the binary calls it (argv[0] first), with what it printed on each stream,
// so CLI tests assert the outcome and the exact text a user reads.

#include <sstream>
#include <string>
#include <vector>

#include "exporter/app/cli.h"

namespace roceqos {

struct Parsed {
  CliOutcome outcome;
  std::string out;
  std::string err;
};

inline Parsed Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "roce_qos_exporter");
  std::ostringstream out, err;
  Parsed p{ParseCommandLine(args, out, err), "", ""};
  p.out = out.str();
  p.err = err.str();
  return p;
}

}  // namespace roceqos
