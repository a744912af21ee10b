#pragma once

// Reading the small text files of sysfs/procfs with "missing" kept apart from "failed", and the
// few other file-system questions the collectors ask (links, directories). Every one goes through
// the capture seam (collectors/capture/tape.h): recorded in `capture`, answered from the bundle in
// replay.

#include <optional>
#include <string>
#include <vector>

namespace roceqos {

/// One small file (at most 64 KiB). ENOENT/ENOTDIR set `missing` so callers can report a source
/// as absent rather than failed.
struct FileRead {
  bool missing = false;
  std::string content;
  std::string error;  // empty on success: "open <path>: <reason>" / "read <path>: <reason>"
  int errnum = 0;
};

FileRead ReadSmallFile(const std::string& path);

/// The errnum of an Error for a file that was read but holds malformed text (ReasonOf: reason
/// "malformed"), not a failed read.
inline constexpr int kMalformedText = 0;

/// readlink(2): the link's target as stored, nullopt when `path` is missing or not a link.
std::optional<std::string> ReadLink(const std::string& path);
/// True when `path` exists itself (a dangling link counts, as with lstat(2)).
bool PathExists(const std::string& path);
/// True when `path` is (or links to) a directory.
bool IsDirectory(const std::string& path);
/// Names of the regular files (following links) directly in `dir`, sorted. `missing` when it is
/// not a directory; `error` when it exists but cannot be listed.
struct DirList {
  bool missing = false;
  std::vector<std::string> files;
  std::string error;
};
DirList ListRegularFiles(const std::string& dir);
/// Names of the directories (following links) directly in `dir`, sorted; as ListRegularFiles.
DirList ListSubdirectories(const std::string& dir);

}  // namespace roceqos
