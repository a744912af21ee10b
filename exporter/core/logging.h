#pragma once

#include <spdlog/formatter.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace roceqos {

/// One line per record: `ts=2024-05-01T10:00:00.123Z level=info msg="..."` (logfmt) or
/// `{"ts":"...","level":"info","msg":"..."}` (json). Levels are debug|info|warn|error.
std::unique_ptr<spdlog::formatter> MakeLogFormatter(std::string_view format);

/// Points spdlog's default logger at stderr with the given level and format (see --log.*).
Result<void> SetupLogging(std::string_view level, std::string_view format);

}  // namespace roceqos
