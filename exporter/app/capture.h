#pragma once

// `roce_qos_exporter capture --output FILE` records everything the exporter reads on this node
// into one bundle, and `--replay FILE` runs the exporter (daemon or `check`) against a bundle
// with no kernel access (docs/capture.md).

#include <iosfwd>
#include <string>
#include <string_view>

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

/// Manifest keys of the capture run's --collector.device-include/-exclude (present only when the
/// flag was given; bundles written before they existed have neither).
inline constexpr std::string_view kMetaDeviceInclude = "capture.device_include";
inline constexpr std::string_view kMetaDeviceExclude = "capture.device_exclude";

/// Loads `config.replay_path` and switches every collector to answer from it. Refuses
/// --remediation=enforce (a replay never writes). Takes the bundle's device selection into
/// `config` where the command line gives none, so a replay selects what was captured. Returns 0,
/// or 2 with a message on `err`.
int StartReplayFrom(Config& config, std::ostream& err);

}  // namespace roceqos
