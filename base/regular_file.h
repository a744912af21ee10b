#pragma once

// Reading a file an operator names (the policy, a capture bundle) without trusting what it is:
// a FIFO would block the reading thread until a writer appears, /dev/zero or a runaway file would
// be read into memory without end.

#include <cstddef>
#include <string>

#include "base/result.h"

namespace roceqos {

/// The whole content of `path`, following symlinks (a Kubernetes ConfigMap mount is a chain of
/// them), when its final target is a regular file of at most `max_bytes` bytes. Otherwise one
/// line naming the path: "<path>: cannot open: <strerror>", "<path>: not a regular file (a FIFO)",
/// "<path>: larger than the limit of <n> bytes". Never blocks on a FIFO or a device.
Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes);

}  // namespace roceqos
