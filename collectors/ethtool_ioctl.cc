#include "collectors/ethtool_ioctl.h"

#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

#include "collectors/capture/tape.h"

namespace roceqos {
namespace {

template <typename T>
T Fixed(const void* command) {
  T fixed;
  std::memcpy(&fixed, command, sizeof(fixed));
  return fixed;
}

/// The bytes the kernel reads and writes for `command`: the fixed struct of its ETHTOOL_* cmd and
/// the variable part its length field announces (what the caller allocated). Unknown commands:
/// the cmd word only.
size_t CommandBytes(const void* command) {
  switch (Fixed<uint32_t>(command)) {
    case ETHTOOL_GDRVINFO:
      return sizeof(ethtool_drvinfo);
    case ETHTOOL_GSSET_INFO:
      return sizeof(ethtool_sset_info) +
             sizeof(uint32_t) * std::popcount(Fixed<ethtool_sset_info>(command).sset_mask);
    case ETHTOOL_GSTRINGS:
      return sizeof(ethtool_gstrings) +
             size_t{Fixed<ethtool_gstrings>(command).len} * ETH_GSTRING_LEN;
    case ETHTOOL_GSTATS:
      return sizeof(ethtool_stats) +
             size_t{Fixed<ethtool_stats>(command).n_stats} * sizeof(uint64_t);
    case ETHTOOL_GTUNABLE:
      return sizeof(ethtool_tunable) + Fixed<ethtool_tunable>(command).len;
    case ETHTOOL_GMODULEINFO:
      return sizeof(ethtool_modinfo);
    case ETHTOOL_GMODULEEEPROM:
      return sizeof(ethtool_eeprom) + Fixed<ethtool_eeprom>(command).len;
    default:
      return sizeof(uint32_t);
  }
}

Result<void> ReplayIoctl(std::string_view ifname, void* command, std::string_view op) {
  const size_t size = CommandBytes(command);
  const auto* bytes = static_cast<const std::byte*>(command);
  std::optional<tape::IoctlExchange> recorded =
      tape::ReplayIoctl(ifname, tape::Blob(bytes, bytes + size));
  if (!recorded) {
    return MakeError(ENODATA,
                     fmt::format("{} {}: replay: the capture has no such call", op, ifname));
  }
  if (recorded->errnum != 0) {
    return MakeError(recorded->errnum, fmt::format("{} {}: {} (replayed)", op, ifname,
                                                   std::strerror(recorded->errnum)));
  }
  // An empty record has a null data(): memcpy from null is undefined even for 0 bytes.
  if (!recorded->out.empty())
    std::memcpy(command, recorded->out.data(), std::min(size, recorded->out.size()));
  return {};
}

}  // namespace

Result<void> EthtoolIoctl(int fd, std::string_view ifname, void* command, std::string_view op) {
  ifreq request{};
  if (ifname.empty() || ifname.size() >= sizeof(request.ifr_name) ||
      ifname.find('\0') != std::string_view::npos) {
    return MakeError(EINVAL, fmt::format("{} '{}': not a valid interface name (1..{} bytes)", op,
                                         ifname, sizeof(request.ifr_name) - 1));
  }
  if (tape::Replaying()) return ReplayIoctl(ifname, command, op);
  std::memcpy(request.ifr_name, ifname.data(), ifname.size());
  request.ifr_data = static_cast<char*>(command);
  const bool recording = tape::Recording();
  const size_t size = recording ? CommandBytes(command) : 0;
  const auto* bytes = static_cast<const std::byte*>(command);
  tape::Blob in = recording ? tape::Blob(bytes, bytes + size) : tape::Blob{};
  const int errnum = ioctl(fd, SIOCETHTOOL, &request) < 0 ? errno : 0;
  if (recording) {
    tape::RecordIoctl({std::string(ifname), errnum, std::move(in),
                       errnum == 0 ? tape::Blob(bytes, bytes + size) : tape::Blob{}});
  }
  if (errnum != 0)
    return MakeError(errnum, fmt::format("{} {}: {}", op, ifname, std::strerror(errnum)));
  return {};
}

EthtoolSocket::~EthtoolSocket() {
  if (fd_ >= 0) close(fd_);
}

Result<void> EthtoolSocket::Call(const std::string& ifname, void* command, std::string_view op) {
  if (fd_ < 0 && !tape::Replaying()) {
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
