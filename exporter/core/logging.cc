#include "exporter/core/logging.h"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <optional>

#include "base/enum_names.h"
#include "base/log_event.h"
#include "base/utf8.h"

namespace roceqos {
namespace {

void Append(spdlog::memory_buf_t& dest, std::string_view text) {
  dest.append(text.data(), text.data() + text.size());
}

// The --log.level values and the level field of a record: one word per level the flag accepts.
constexpr EnumName<spdlog::level::level_enum> kLevelNames[] = {
    {spdlog::level::debug, "debug"},
    {spdlog::level::info, "info"},
    {spdlog::level::warn, "warn"},
    {spdlog::level::err, "error"},
};

// trace records (never enabled by the flag) print as debug, critical ones as error.
std::string_view LevelName(spdlog::level::level_enum level) {
  return NameOf(kLevelNames, level == spdlog::level::trace ? spdlog::level::debug : level, "error");
}

void AppendTimestamp(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  const auto since_epoch = msg.time.time_since_epoch();
  const std::time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  fmt::format_to(std::back_inserter(dest), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                 utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                 utc.tm_sec, millis);
}

// Appends `text` with ill-formed UTF-8 as U+FFFD: a JSON document must be UTF-8 (RFC 8259
// section 8.1), and log shippers reject or mangle a line that is not, whatever bytes a kernel
// string or a switch sent.
void AppendUtf8(std::string_view text, spdlog::memory_buf_t& dest) {
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Step step = NextUtf8(text.substr(i));
    if (step.valid) {
      Append(dest, text.substr(i, step.length));
    } else {
      Append(dest, kUtf8Replacement);
    }
    i += step.length;
  }
}

// Escapes for a double-quoted logfmt value or a JSON string: both need \" \\ and no raw control
// characters, so one line stays one line whatever a kernel message contains.
void AppendQuoted(std::string_view text, spdlog::memory_buf_t& dest) {
  dest.push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      const Utf8Step step = NextUtf8(text.substr(i));
      AppendUtf8(text.substr(i, step.length), dest);
      i += step.length;
      continue;
    }
    switch (c) {
      case '"':
        Append(dest, "\\\"");
        break;
      case '\\':
        Append(dest, "\\\\");
        break;
      case '\n':
        Append(dest, "\\n");
        break;
      case '\r':
        Append(dest, "\\r");
        break;
      case '\t':
        Append(dest, "\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(dest), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          dest.push_back(c);
        }
    }
    ++i;
  }
  dest.push_back('"');
}

// logfmt leaves a simple value bare and quotes anything with a space, quote, '=' or control byte.
void AppendLogfmtValue(std::string_view value, spdlog::memory_buf_t& dest) {
  const bool bare = !value.empty() && value.find_first_of(" \"=\\") == std::string_view::npos &&
                    std::none_of(value.begin(), value.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  if (bare) {
    AppendUtf8(value, dest);
  } else {
    AppendQuoted(value, dest);
  }
}

class LogfmtFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    Append(dest, "ts=");
    AppendTimestamp(msg, dest);
    Append(dest, " level=");
    Append(dest, LevelName(msg.level));
    const DecodedLogRecord record =
        DecodeLogRecord(std::string_view(msg.payload.data(), msg.payload.size()));
    Append(dest, " msg=");
    AppendQuoted(record.msg, dest);
    for (const DecodedLogField& field : record.fields) {
      dest.push_back(' ');
      Append(dest, field.key);
      dest.push_back('=');
      AppendLogfmtValue(field.value, dest);
    }
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LogfmtFormatter>();
  }
};

class JsonFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    Append(dest, "{\"ts\":\"");
    AppendTimestamp(msg, dest);
    Append(dest, "\",\"level\":\"");
    Append(dest, LevelName(msg.level));
    const DecodedLogRecord record =
        DecodeLogRecord(std::string_view(msg.payload.data(), msg.payload.size()));
    Append(dest, "\",\"msg\":");
    AppendQuoted(record.msg, dest);
    for (const DecodedLogField& field : record.fields) {
      dest.push_back(',');
      AppendQuoted(field.key, dest);
      dest.push_back(':');
      if (field.literal) {
        Append(dest, field.value);  // a number or a boolean (LogField::literal)
      } else {
        AppendQuoted(field.value, dest);
      }
    }
    Append(dest, "}\n");
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

std::unique_ptr<spdlog::formatter> MakeLogFormatter(std::string_view format) {
  if (format == "json") return std::make_unique<JsonFormatter>();
  return std::make_unique<LogfmtFormatter>();
}

Result<void> SetupLogging(std::string_view level, std::string_view format) {
  const std::optional<spdlog::level::level_enum> parsed = ValueOf(kLevelNames, level);
  if (!parsed) return MakeError(EINVAL, fmt::format("unknown log level \"{}\"", level));
  if (format != "logfmt" && format != "json") {
    return MakeError(EINVAL, fmt::format("unknown log format \"{}\"", format));
  }
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  sink->set_formatter(MakeLogFormatter(format));
  auto logger = std::make_shared<spdlog::logger>("roce_qos_exporter", std::move(sink));
  logger->set_level(*parsed);
  logger->flush_on(spdlog::level::debug);  // stderr: a line must be out before a crash or kill
  spdlog::set_default_logger(std::move(logger));
  return {};
}

}  // namespace roceqos
