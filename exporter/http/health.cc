#include "exporter/http/health.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/duration.h"
#include "exporter/core/sampling_limits.h"

namespace roceqos {

std::chrono::nanoseconds DefaultHealthMaxSampleAge(std::chrono::nanoseconds sampler_period) {
  // Twice the backed-off cap: a sampler over budget publishes every cap period, and one sample
  // of that length may also carry a remediation pass.
  return std::max<std::chrono::nanoseconds>(kMinDefaultHealthMaxSampleAge,
                                            2 * kDefaultMaxPeriodFactor * sampler_period);
}

std::chrono::nanoseconds HealthStartupGrace(std::chrono::nanoseconds max_sample_age) {
  return std::max<std::chrono::nanoseconds>(kMinHealthStartupGrace, max_sample_age);
}

HealthVerdict JudgeHealth(std::chrono::nanoseconds max_sample_age,
                          std::optional<std::chrono::steady_clock::time_point> last_sample,
                          std::chrono::steady_clock::time_point started,
                          std::chrono::steady_clock::time_point now) {
  if (!last_sample) {
    const std::chrono::nanoseconds waited = now - started;
    const std::chrono::nanoseconds grace = HealthStartupGrace(max_sample_age);
    if (waited <= grace) return {};
    return {false, fmt::format("no sample published {} after start (start-up grace {})",
                               FormatDuration(waited), FormatDuration(grace))};
  }
  // A snapshot stamped after `now` (the route read the clock before the sampler published) is
  // fresh, not negative-aged.
  const std::chrono::nanoseconds age = std::max(now - *last_sample, std::chrono::nanoseconds(0));
  if (age <= max_sample_age) return {};
  return {false,
          fmt::format("the sampler has published no sample for {} (--web.health-max-sample-age {})",
                      FormatDuration(age), FormatDuration(max_sample_age))};
}

HealthVerdict JudgeLldpSocket(const LldpState* lldp) {
  if (lldp == nullptr || lldp->view || lldp->failure != LldpAbsence::kLldpdSocketStale) return {};
  return {false, fmt::format("lldpd's control socket was replaced (lldpd restarted) and this "
                             "process holds the old one: a restart mounts the new one ({})",
                             lldp->failure_message)};
}

}  // namespace roceqos
