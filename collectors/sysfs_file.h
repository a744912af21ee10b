#pragma once

// Reading the small text files of sysfs/procfs with "missing" kept apart from "failed".

#include <string>

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

}  // namespace roceqos
