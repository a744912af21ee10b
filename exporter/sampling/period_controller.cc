#include "exporter/sampling/period_controller.h"

#include <algorithm>

namespace roceqos {

PeriodController::PeriodController(Duration configured, double budget, Duration max_period)
    : configured_(configured),
      effective_(configured),
      max_(std::max(max_period, configured)),
      budget_(budget) {}

bool PeriodController::Record(Duration kernel_time) {
  const double cost = static_cast<double>(kernel_time.count());
  const double allowed = budget_ * static_cast<double>(effective_.count());
  if (cost > allowed) {
    ++overruns_;
    calm_ = 0;
    effective_ = std::min(effective_ * 2, max_);
    return true;
  }
  if (effective_ > configured_ && cost <= allowed / 4) {
    if (++calm_ >= kCalmSamples) {
      effective_ = std::max(effective_ / 2, configured_);
      calm_ = 0;
    }
  } else {
    calm_ = 0;
  }
  return false;
}

}  // namespace roceqos
