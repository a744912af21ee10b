#pragma once

// What the derive stage attaches to each DeviceSnapshot (snapshot.h `derived`), rendered by
// metrics_derived.cc.

#include <memory>
#include <string>
#include <vector>

#include "exporter/signals/derive.h"

namespace roceqos {

struct DerivedDeviceSignals {
  DeviceSignals signals;
  /// `window` label values, in the order of the per-window arrays in `signals`; one vector
  /// shared by every device and snapshot.
  std::shared_ptr<const std::vector<std::string>> window_labels;
};

}  // namespace roceqos
