#pragma once

#include <functional>
#include <optional>
#include <regex>

#include "collectors/device.h"

namespace roceqos {

/// Which netdevs the sampler reads. Without --collector.device-include the default rule applies
/// (collectors/discovery.h SelectedByDefault: Mellanox PFs and netdevs bound to an RDMA port);
/// with it, exactly the netdevs whose whole name matches the include regex. Then any netdev whose
/// whole name matches --collector.device-exclude is dropped.
class DeviceSelector {
 public:
  DeviceSelector(std::function<bool(const Device&)> default_rule, std::optional<std::regex> include,
                 std::optional<std::regex> exclude);

  bool Selected(const Device& device) const;

 private:
  std::function<bool(const Device&)> default_rule_;
  std::optional<std::regex> include_;
  std::optional<std::regex> exclude_;
};

}  // namespace roceqos
