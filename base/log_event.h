#pragma once

// Structured log records: a fixed message plus key=value fields, so logfmt and JSON consumers can
// filter on netdev, field or errno instead of parsing prose. The fields travel inside spdlog's
// payload (separated by control characters no field contains after escaping) and the formatters
// of logging.h render them as `key=value` pairs or JSON members.

#include <spdlog/spdlog.h>

#include <concepts>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roceqos {

struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const char* v) : key(k), value(v) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(v) {}
  template <typename T>
  requires std::integral<T> || std::floating_point<T> LogField(std::string_view k, T v)
      : key(k), value(fmt::format("{}", v)) {}

  std::string_view key;
  std::string value;
};

/// The payload for one record; DecodeLogRecord splits it again.
std::string EncodeLogRecord(std::string_view msg, std::initializer_list<LogField> fields);

struct DecodedLogRecord {
  std::string_view msg;
  std::vector<std::pair<std::string_view, std::string_view>> fields;
};
DecodedLogRecord DecodeLogRecord(std::string_view payload);

/// Logs `msg` with `fields` at `level` (nothing is formatted below the logger's level).
inline void LogEvent(spdlog::level::level_enum level, std::string_view msg,
                     std::initializer_list<LogField> fields) {
  if (!spdlog::should_log(level)) return;
  spdlog::log(level, "{}", EncodeLogRecord(msg, fields));
}

}  // namespace roceqos
