#include "base/regular_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace roceqos {
namespace {

std::string_view FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

Error SystemError(const std::string& path, std::string_view what, int errnum) {
  return MakeError(errnum, fmt::format("{}: {}: {}", path, what, std::strerror(errnum)));
}

Result<void> CheckRegular(const std::string& path, const struct stat& st, size_t max_bytes) {
  if (!S_ISREG(st.st_mode)) {
    return MakeError(EINVAL,
                     fmt::format("{}: not a regular file ({})", path, FileKind(st.st_mode)));
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    return MakeError(EFBIG, fmt::format("{}: {} bytes, larger than the limit of {} bytes", path,
                                        st.st_size, max_bytes));
  }
  return {};
}

// Reads to the end, but one byte past the limit at most: a file that grew after fstat (or a
// procfs-like file that reports size 0) is still bounded.
Result<std::string> ReadBounded(int fd, const std::string& path, size_t max_bytes) {
  std::string text;
  char buffer[65536];
  while (text.size() <= max_bytes) {
    const size_t want = std::min(sizeof(buffer), max_bytes + 1 - text.size());
    const ssize_t got = ::read(fd, buffer, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return SystemError(path, "read error", errno);
    if (got == 0) return text;
    text.append(buffer, static_cast<size_t>(got));
  }
  return MakeError(EFBIG, fmt::format("{}: larger than the limit of {} bytes", path, max_bytes));
}

Result<std::string> ReadOpened(int fd, const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return SystemError(path, "cannot stat", errno);
  if (Result<void> regular = CheckRegular(path, st, max_bytes); !regular) return regular.error();
  return ReadBounded(fd, path, max_bytes);
}

}  // namespace

Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait for one. The type is
  // checked on the opened descriptor, so a file swapped after a check by path cannot slip by.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return SystemError(path, "cannot open", errno);
  Result<std::string> text = ReadOpened(fd, path, max_bytes);
  ::close(fd);
  return text;
}

}  // namespace roceqos
