#include "collectors/sysfs_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "collectors/capture/tape.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

FileRead ReadLive(const std::string& path) {
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

// Replay and record share one encoding per question (tape::FsEntry): errno 0 with data, ENOENT
// for missing, another errno for a failure.
tape::FsEntry Replayed(std::string_view op, const std::string& path) {
  std::optional<tape::FsEntry> entry = tape::ReplayFs(op, path);
  if (entry) return *entry;
  return tape::FsEntry{std::string(op), path, ENOENT, ""};  // not captured: it did not exist
}

FileRead FromEntry(const tape::FsEntry& entry) {
  FileRead result;
  if (entry.errnum == ENOENT) {
    result.missing = true;
  } else if (entry.errnum != 0) {
    result.errnum = entry.errnum;
    result.error = fmt::format("read {}: {} (replayed)", entry.path, std::strerror(entry.errnum));
  } else {
    result.content = entry.data;
  }
  return result;
}

bool Flag(std::string_view op, const std::string& path, bool live_value) {
  if (tape::Replaying()) return Replayed(op, path).data == "1";
  tape::RecordFs({std::string(op), path, 0, live_value ? "1" : "0"});
  return live_value;
}

}  // namespace

FileRead ReadSmallFile(const std::string& path) {
  if (tape::Replaying()) return FromEntry(Replayed("read", path));
  FileRead result = ReadLive(path);
  if (tape::Recording()) {
    const int errnum = result.missing ? ENOENT : (result.error.empty() ? 0 : result.errnum);
    tape::RecordFs(
        {"read", path, errnum == 0 && !result.error.empty() ? EFBIG : errnum, result.content});
  }
  return result;
}

std::optional<std::string> ReadLink(const std::string& path) {
  if (tape::Replaying()) {
    tape::FsEntry entry = Replayed("readlink", path);
    if (entry.errnum != 0) return std::nullopt;
    return entry.data;
  }
  std::error_code ec;
  const fs::path target = fs::read_symlink(path, ec);
  tape::RecordFs({"readlink", path, ec ? ENOENT : 0, ec ? "" : target.string()});
  if (ec) return std::nullopt;
  return target.string();
}

bool PathExists(const std::string& path) {
  std::error_code ec;
  return Flag("exists", path, !tape::Replaying() && fs::exists(fs::symlink_status(path, ec)));
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return Flag("isdir", path, !tape::Replaying() && fs::is_directory(path, ec));
}

namespace {

// One listing question, `op` in the tape: the names in `dir` whose entry `keep` accepts.
template <typename Keep>
DirList ListEntries(std::string_view op, const std::string& dir, Keep keep) {
  DirList list;
  if (tape::Replaying()) {
    tape::FsEntry entry = Replayed(op, dir);
    list.missing = entry.errnum == ENOENT;
    if (entry.errnum != 0 && !list.missing) {
      list.error = fmt::format("list {}: {} (replayed)", dir, std::strerror(entry.errnum));
    }
    for (size_t start = 0; entry.errnum == 0 && start < entry.data.size();) {
      const size_t end = std::min(entry.data.find('\n', start), entry.data.size());
      list.files.push_back(entry.data.substr(start, end - start));
      start = end + 1;
    }
    return list;
  }
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  int errnum = 0;
  if (ec) {
    list.missing = ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory;
    errnum = list.missing ? ENOENT : ec.value();
    if (!list.missing) list.error = fmt::format("list {}: {}", dir, ec.message());
  }
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (keep(*it)) list.files.push_back(it->path().filename().string());
  }
  if (ec && errnum == 0) {
    errnum = ec.value();
    list.error = fmt::format("list {}: {}", dir, ec.message());
  }
  std::sort(list.files.begin(), list.files.end());
  std::string names;
  for (const std::string& name : list.files) names += (names.empty() ? "" : "\n") + name;
  tape::RecordFs({std::string(op), dir, errnum, names});
  return list;
}

}  // namespace

DirList ListRegularFiles(const std::string& dir) {
  return ListEntries("list", dir, [](const fs::directory_entry& entry) {
    std::error_code ec;
    return entry.is_regular_file(ec);
  });
}

DirList ListSubdirectories(const std::string& dir) {
  return ListEntries("listdirs", dir, [](const fs::directory_entry& entry) {
    std::error_code ec;
    return entry.is_directory(ec);
  });
}

}  // namespace roceqos
