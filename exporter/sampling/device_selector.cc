#include "exporter/sampling/device_selector.h"

#include <utility>

namespace roceqos {

DeviceSelector::DeviceSelector(std::function<bool(const Device&)> default_rule,
                               std::optional<std::regex> include, std::optional<std::regex> exclude)
    : default_rule_(std::move(default_rule)),
      include_(std::move(include)),
      exclude_(std::move(exclude)) {}

bool DeviceSelector::Selected(const Device& device) const {
  bool selected = include_ ? std::regex_match(device.name, *include_)
                           : (default_rule_ && default_rule_(device));
  if (selected && exclude_ && std::regex_match(device.name, *exclude_)) selected = false;
  return selected;
}

}  // namespace roceqos
