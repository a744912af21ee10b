#include "collectors/host_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "collectors/capture/tape.h"
#include "collectors/inbox_cc_params.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

Result<void> WriteSmallFile(const std::string& path, std::string_view value) {
  if (tape::Replaying()) return MakeError(EROFS, fmt::format("write {}: refused in replay", path));
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(errno, fmt::format("open {}: {}", path, std::strerror(errno)));
  ssize_t n = ::write(fd, value.data(), value.size());
  int saved = errno;
  ::close(fd);
  if (n < 0) return MakeError(saved, fmt::format("write {}: {}", path, std::strerror(saved)));
  if (static_cast<size_t>(n) != value.size())
    return MakeError(EIO, fmt::format("write {}: short write", path));
  return {};
}

}  // namespace

Result<void> HostWriter::WriteDcqcnEnable(std::string_view netdev, bool np, int prio,
                                          bool enable) const {
  return WriteSmallFile(fmt::format("{}/class/net/{}/ecn/{}/enable/{}", paths_.sysfs, netdev,
                                    DcqcnRoleName(DcqcnRoleOf(np)), prio),
                        enable ? "1\n" : "0\n");
}

Result<void> HostWriter::WriteDcqcnParam(std::string_view netdev, bool np, std::string_view name,
                                         uint64_t value) const {
  // The name comes from the policy; a '/' or ".." would leave ecn/roce_*/.
  if (name.empty() || name.find('/') != std::string_view::npos || name == "." || name == "..")
    return MakeError(EINVAL, fmt::format("\"{}\" is not a DCQCN parameter name", name));
  const std::string ecn = fmt::format("{}/class/net/{}/ecn", paths_.sysfs, netdev);
  if (IsDirectory(ecn)) {
    return WriteSmallFile(fmt::format("{}/{}/{}", ecn, DcqcnRoleName(DcqcnRoleOf(np)), name),
                          fmt::format("{}\n", value));
  }
  // The same parameter where the reader found it: the inbox driver's cc_params.
  std::optional<std::string> dir = InboxCcParamsDir(paths_, netdev);
  std::optional<std::string_view> file = InboxCcParamFile(DcqcnRoleOf(np), name);
  if (!dir || !file)
    return MakeError(ENOENT, fmt::format("{}: no ecn/{}/{} sysfs and no inbox cc_params for it",
                                         netdev, DcqcnRoleName(DcqcnRoleOf(np)), name));
  return WriteSmallFile(fmt::format("{}/{}", *dir, *file), fmt::format("{}\n", value));
}

Result<void> HostWriter::WriteTcpEcn(int value) const {
  return WriteSmallFile(paths_.procfs + "/sys/net/ipv4/tcp_ecn", fmt::format("{}\n", value));
}

Result<void> HostWriter::WriteMofedTrafficClass(std::string_view rdma_device, uint32_t port,
                                                int tos) const {
  return WriteSmallFile(
      fmt::format("{}/class/infiniband/{}/tc/{}/traffic_class", paths_.sysfs, rdma_device, port),
      fmt::format("{}\n", tos));
}

}  // namespace roceqos
