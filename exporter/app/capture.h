#pragma once

// `roce_qos_exporter capture --output FILE` records everything the exporter reads on this node
// into one bundle, and `--replay FILE` runs the exporter (daemon or `check`) against a bundle
// with no kernel access (docs/capture.md).

#include <iosfwd>
#include <string>

#include "exporter/app/config.h"

namespace roceqos {

struct CaptureOptions {
  std::string output;  // --output FILE ("-": standard output)
  int samples = 3;     // --samples: sampler passes (the period apart), so rates have two points
};

/// Runs discovery, `samples` sampler passes with the derive and QoS stages, and `check --json`
/// under the recording seam; writes the bundle with a manifest and the run's own /metrics and
/// check output. Returns the process exit code (0, or 2 with a message on `err`).
int RunCapture(const Config& config, const CaptureOptions& options, std::ostream& out,
               std::ostream& err);

/// Loads `path` and switches every collector to answer from it. Refuses --remediation=enforce
/// (a replay never writes). Returns 0, or 2 with a message on `err`.
int StartReplayFrom(const Config& config, std::ostream& err);

}  // namespace roceqos
