#pragma once

// Limits of the sampler's cadence that layers above sampling derive their own bounds from:
// /-/healthy's default sample age (exporter/http/health.h) and the flags' checks
// (exporter/app/cli.cc) need the number without linking the sampler.

namespace roceqos {

/// The backed-off period's default cap, in periods (SamplerOptions::max_period).
inline constexpr int kDefaultMaxPeriodFactor = 16;

}  // namespace roceqos
