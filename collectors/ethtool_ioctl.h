#pragma once

// The one SIOCETHTOOL round trip every ethtool command goes through (GDRVINFO in discovery, the
// counter commands in the ethtool collector, GTUNABLE for the PFC storm guard, the module EEPROM
// fallback), and a lazily opened socket for the collectors that keep one.

#include <string>
#include <string_view>

#include "base/result.h"

namespace roceqos {

/// Issues SIOCETHTOOL for `ifname` on `fd` (any socket reaches dev_ioctl()) with `command`, the
/// ethtool command struct whose first __u32 is the ETHTOOL_* cmd, read and written in place.
/// Errors name `op` and `ifname`: EINVAL when `ifname` is empty, contains NUL or does not fit
/// ifr_name (the kernel would truncate it and could address another device), else the ioctl's
/// errno.
Result<void> EthtoolIoctl(int fd, std::string_view ifname, void* command, std::string_view op);

/// EthtoolIoctl on a socket opened at the first call and kept: an AF_INET datagram socket (AF_UNIX
/// on hosts without IPv4), so it reads the network namespace this object first called in.
class EthtoolSocket {
 public:
  EthtoolSocket() = default;
  EthtoolSocket(const EthtoolSocket&) = delete;
  EthtoolSocket& operator=(const EthtoolSocket&) = delete;
  ~EthtoolSocket();

  Result<void> Call(const std::string& ifname, void* command, std::string_view op);

 private:
  int fd_ = -1;
};

}  // namespace roceqos
