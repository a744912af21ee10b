#include "exporter/core/derived_signals.h"

#include <algorithm>

namespace roceqos {

bool DeviceSignals::AnyStorm() const {
  return std::any_of(storms.begin(), storms.end(), [](const StormSignals& s) { return s.stormed; });
}

}  // namespace roceqos
