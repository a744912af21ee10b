#include "exporter/app/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "base/regex_text.h"

namespace roceqos {
namespace {

Result<std::optional<std::regex>> Compile(const std::optional<std::string>& pattern,
                                          std::string_view flag) {
  if (!pattern) return std::optional<std::regex>();
  auto compiled = CompileUserRegex(flag, *pattern);
  if (!compiled) return compiled.error();
  return std::optional<std::regex>(std::move(*compiled));
}

}  // namespace

std::vector<std::string> ConfigWarnings(const Config& config) {
  std::vector<std::string> warnings;
  const auto& windows = config.derive.windows;
  if (std::find(windows.begin(), windows.end(), kShippedRulesWindow) == windows.end()) {
    warnings.push_back(fmt::format(
        "--derive.windows has no {} window: the shipped alerts RoceQosPfcPausedRatioHigh and "
        "RoceQosEcnSilent and the dashboards read window=\"{}\" and will stay empty",
        WindowLabel(kShippedRulesWindow), WindowLabel(kShippedRulesWindow)));
  }
  return warnings;
}

Result<SamplerOptions> MakeSamplerOptions(const Config& config) {
  SamplerOptions options;
  options.period = config.sampler_period;
  options.budget = config.sampler_budget;
  options.idle_period = config.sampler_idle_period;
  options.duty_cycle = config.sampler_duty_cycle;
  options.discovery_interval = config.discovery_interval;
  auto include = Compile(config.device_include, "--collector.device-include");
  if (!include) return include.error();
  auto exclude = Compile(config.device_exclude, "--collector.device-exclude");
  if (!exclude) return exclude.error();
  auto raw = Compile(config.raw_include, "--collector.ethtool.raw-include");
  if (!raw) return raw.error();
  options.device_include = std::move(include.value());
  options.device_exclude = std::move(exclude.value());
  options.device_include_text = config.device_include.value_or("");
  options.device_exclude_text = config.device_exclude.value_or("");
  options.raw_include = std::move(raw.value());
  return options;
}

}  // namespace roceqos
