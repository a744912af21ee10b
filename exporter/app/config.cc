#include "exporter/app/config.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
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

Result<std::string> CivetListeningPorts(std::string_view address) {
  auto invalid = [&](std::string_view why) {
    return MakeError(EINVAL, fmt::format("invalid --web.listen-address \"{}\": {}", address, why));
  };
  if (!address.empty() && address.front() == '[') {
    return invalid("IPv6 is not supported by this build's HTTP server (civetweb without IPv6)");
  }
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return invalid("expected [host]:port");
  std::string_view host = address.substr(0, colon);
  const std::string_view port_text = address.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return invalid("port must be a number 0..65535");
  }
  if (host.empty()) return std::to_string(port);
  if (host == "localhost") host = "127.0.0.1";
  in_addr parsed{};
  const std::string host_str(host);
  if (inet_pton(AF_INET, host_str.c_str(), &parsed) != 1) {
    return invalid("host must be an IPv4 address, \"localhost\" or empty (all interfaces)");
  }
  return fmt::format("{}:{}", host_str, port);
}

}  // namespace roceqos
