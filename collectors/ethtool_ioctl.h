#pragma once

// The one SIOCETHTOOL call site of the collectors that keep a socket: validates the interface
// name, opens the socket lazily and turns errno into an Error naming the command and device.

#include <string>
#include <string_view>

#include "collectors/result.h"

namespace roceqos {

class EthtoolIoctl {
 public:
  EthtoolIoctl() = default;
  EthtoolIoctl(const EthtoolIoctl&) = delete;
  EthtoolIoctl& operator=(const EthtoolIoctl&) = delete;
  ~EthtoolIoctl();

  /// ioctl(SIOCETHTOOL) with ifr_data = data (a struct starting with the ETHTOOL_* cmd). The
  /// socket is an AF_INET datagram socket (AF_UNIX without IPv4), so it reads the network
  /// namespace this object first called in. `what` names the command in errors
  /// ("ETHTOOL_GSTATS eth0: No such device"). EINVAL for names the kernel would truncate.
  Result<void> Call(const std::string& ifname, void* data, std::string_view what);

 private:
  int fd_ = -1;
};

}  // namespace roceqos
