#include "collectors/ethtool_ioctl.h"

#include <fmt/format.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace roceqos {

EthtoolIoctl::~EthtoolIoctl() {
  if (fd_ >= 0) close(fd_);
}

Result<void> EthtoolIoctl::Call(const std::string& ifname, void* data, std::string_view what) {
  // A longer name would be truncated by the kernel and could address another device.
  if (ifname.empty() || ifname.size() >= IFNAMSIZ || ifname.find('\0') != std::string::npos) {
    return MakeError(EINVAL, fmt::format("{} '{}': not a valid interface name (1..{} bytes)", what,
                                         ifname, IFNAMSIZ - 1));
  }
  if (fd_ < 0) {
    // Any socket reaches dev_ioctl(); AF_UNIX is the fallback for hosts without IPv4.
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      const int saved = errno;
      return MakeError(saved, fmt::format("{} {}: socket: {}", what, ifname, std::strerror(saved)));
    }
  }
  ifreq request{};
  std::memcpy(request.ifr_name, ifname.data(), ifname.size());
  request.ifr_data = static_cast<char*>(data);
  if (ioctl(fd_, SIOCETHTOOL, &request) < 0) {
    const int saved = errno;
    return MakeError(saved, fmt::format("{} {}: {}", what, ifname, std::strerror(saved)));
  }
  return {};
}

}  // namespace roceqos
