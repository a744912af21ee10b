#pragma once

// Structured log records: a fixed message plus key=value fields, so logfmt and JSON consumers can
// filter on netdev, field or errno instead of parsing prose. The fields travel inside spdlog's
// payload (separated by control characters no field contains after escaping) and the formatters
// of logging.h render them as `key=value` pairs or JSON members.

#include <spdlog/spdlog.h>

#include <cmath>
#include <concepts>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace roceqos {

/// An integer type a field writes as a number: bool is a boolean and char a character.
template <typename T>
concept LogInteger = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char>;

/// One key=value field. A number or a boolean is kept as such (`literal`), so the JSON format
/// writes it as a JSON number or boolean ("device_rules":1, not "1"); a non-finite floating-point
/// value has no JSON number and stays text ("inf", "nan"). logfmt writes both kinds alike.
struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const char* v) : key(k), value(v) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(v) {}
  LogField(std::string_view k, char v) : key(k), value(1, v) {}  // a character, as text
  LogField(std::string_view k, bool v) : key(k), value(v ? "true" : "false"), literal(true) {}
  template <LogInteger T>
  LogField(std::string_view k, T v) : key(k), value(fmt::format("{}", v)), literal(true) {}
  template <std::floating_point T>
  LogField(std::string_view k, T v)
      : key(k), value(fmt::format("{}", v)), literal(std::isfinite(v)) {}

  std::string_view key;
  std::string value;
  bool literal = false;  // a JSON number or boolean as written in `value`
};

/// The payload for one record; DecodeLogRecord splits it again.
std::string EncodeLogRecord(std::string_view msg, std::initializer_list<LogField> fields);

struct DecodedLogField {
  std::string_view key;
  std::string_view value;
  bool literal = false;  // LogField::literal
};
struct DecodedLogRecord {
  std::string_view msg;
  std::vector<DecodedLogField> fields;
};
DecodedLogRecord DecodeLogRecord(std::string_view payload);

/// Logs `msg` with `fields` at `level` (nothing is formatted below the logger's level).
inline void LogEvent(spdlog::level::level_enum level, std::string_view msg,
                     std::initializer_list<LogField> fields) {
  if (!spdlog::should_log(level)) return;
  spdlog::log(level, "{}", EncodeLogRecord(msg, fields));
}

}  // namespace roceqos
