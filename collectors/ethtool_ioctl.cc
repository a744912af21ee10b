#include "collectors/ethtool_ioctl.h"

#include <fmt/format.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

namespace roceqos {

Result<void> EthtoolIoctl(int fd, std::string_view ifname, void* command, std::string_view op) {
  ifreq request{};
  if (ifname.empty() || ifname.size() >= sizeof(request.ifr_name) ||
      ifname.find('\0') != std::string_view::npos) {
    return MakeError(EINVAL, fmt::format("{} '{}': not a valid interface name (1..{} bytes)", op,
                                         ifname, sizeof(request.ifr_name) - 1));
  }
  std::memcpy(request.ifr_name, ifname.data(), ifname.size());
  request.ifr_data = static_cast<char*>(command);
  if (ioctl(fd, SIOCETHTOOL, &request) < 0) {
    const int errnum = errno;
    return MakeError(errnum, fmt::format("{} {}: {}", op, ifname, std::strerror(errnum)));
  }
  return {};
}

}  // namespace roceqos
