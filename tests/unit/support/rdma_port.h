#pragma once

// Port 1 of an RDMA device bound to a netdev, as discovery reports it: the GID tests' devices.

#include <string>

#include "collectors/device.h"

namespace roceqos::testing {

inline RdmaPort PortOf(const std::string& device, const std::string& netdev) {
  RdmaPort port;
  port.device = device;
  port.port = 1;
  port.netdev = netdev;
  return port;
}

}  // namespace roceqos::testing
