#pragma once

// The one SIOCETHTOOL round trip every ethtool command goes through (GDRVINFO in discovery, the
// counter commands in the ethtool collector, GTUNABLE for the PFC storm guard).

#include <string_view>

#include "collectors/result.h"

namespace roceqos {

/// Issues SIOCETHTOOL for `ifname` on `fd` (any socket reaches dev_ioctl()) with `command`, the
/// ethtool command struct whose first __u32 is the ETHTOOL_* cmd, read and written in place.
/// Errors name `op` and `ifname`: EINVAL when `ifname` is empty, contains NUL or does not fit
/// ifr_name (the kernel would truncate it and could address another device), else the ioctl's
/// errno.
Result<void> EthtoolIoctl(int fd, std::string_view ifname, void* command, std::string_view op);

}  // namespace roceqos
