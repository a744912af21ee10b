#pragma once

// Between declaring the flags (cli.cc) and checking their values (flag_checks.cc): the text of
// the flags CLI11 cannot convert alone, and the one function that turns it into a checked Config.

#include <string>

#include "base/result.h"
#include "exporter/app/config.h"

namespace CLI {
class Option;
}

namespace roceqos {

/// The text of the flags that need more than CLI11's conversion; checked after parsing so every
/// problem is reported the same way.
struct FlagText {
  std::string period, idle_period, discovery, qos_poll, qos_dcqcn_poll, backoff, max_backoff,
      transceiver_interval, lldp_interval;
  std::string health_max_sample_age;  // empty: DefaultHealthMaxSampleAge(--sampler.period)
  std::string link_interval;
  std::string device_include, device_exclude, raw_include;
  CLI::Option* include = nullptr;
  CLI::Option* exclude = nullptr;
  CLI::Option* raw = nullptr;
  CLI::Option* log_level = nullptr;
  bool print_metrics_doc = false;
  double storm_threshold = 0;
  std::string storm_detection, storm_restoration, derive_windows;
  std::string remediation;  // a name of kAllRemediationModes (CLI11 checks it)
  std::string pcie_interval;
  std::string gids_interval;
  std::string attribution_interval;
};

/// After parsing: the optional regexes, then every value check, into `config`. A problem is one
/// Error whose message names the flag.
Result<void> ApplyFlagText(Config& config, const FlagText& text);

}  // namespace roceqos
