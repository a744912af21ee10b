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

EthtoolSocket::~EthtoolSocket() {
  if (fd_ >= 0) close(fd_);
}

Result<void> EthtoolSocket::Call(const std::string& ifname, void* command, std::string_view op) {
  if (fd_ < 0) {
    // Any socket reaches dev_ioctl(); AF_UNIX is the fallback for hosts without IPv4.
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      const int saved = errno;
      return MakeError(saved, fmt::format("{} {}: socket: {}", op, ifname, std::strerror(saved)));
    }
  }
  return EthtoolIoctl(fd_, ifname, command, op);
}

}  // namespace roceqos
