#include "collectors/sysfs_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace roceqos {

FileRead ReadSmallFile(const std::string& path) {
  FileRead result;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      result.missing = true;
    } else {
      result.error = fmt::format("open {}: {}", path, std::strerror(errno));
      result.errnum = errno;
    }
    return result;
  }
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      result.errnum = errno;
      result.error = fmt::format("read {}: {}", path, std::strerror(errno));
      break;
    }
    if (n == 0) break;
    result.content.append(buf, static_cast<size_t>(n));
    if (result.content.size() > 65536) {
      result.error = fmt::format("read {}: larger than 64 KiB", path);
      break;
    }
  }
  ::close(fd);
  return result;
}

}  // namespace roceqos
