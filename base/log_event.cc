#include "base/log_event.h"

namespace roceqos {
namespace {

// ASCII record, unit and group separators: a message or value holding one has it replaced, so a
// kernel string can never forge a field. A key is followed by kValueSep, or by kLiteralSep when
// its value is a number or a boolean (LogField::literal).
constexpr char kFieldSep = '\x1e';
constexpr char kValueSep = '\x1f';
constexpr char kLiteralSep = '\x1d';
constexpr char kValueSeps[] = {kValueSep, kLiteralSep, '\0'};

void AppendClean(std::string& out, std::string_view text) {
  for (char c : text) out.push_back(c == kFieldSep || c == kValueSep || c == kLiteralSep ? '?' : c);
}

}  // namespace

std::string EncodeLogRecord(std::string_view msg, std::initializer_list<LogField> fields) {
  std::string out;
  AppendClean(out, msg);
  for (const LogField& f : fields) {
    out.push_back(kFieldSep);
    AppendClean(out, f.key);
    out.push_back(f.literal ? kLiteralSep : kValueSep);
    AppendClean(out, f.value);
  }
  return out;
}

DecodedLogRecord DecodeLogRecord(std::string_view payload) {
  DecodedLogRecord record;
  size_t end = payload.find(kFieldSep);
  record.msg = payload.substr(0, end);
  while (end != std::string_view::npos) {
    const size_t begin = end + 1;
    end = payload.find(kFieldSep, begin);
    std::string_view field =
        payload.substr(begin, end == std::string_view::npos ? end : end - begin);
    const size_t sep = field.find_first_of(kValueSeps);
    if (sep == std::string_view::npos) continue;  // not one of ours: dropped rather than misread
    record.fields.push_back({.key = field.substr(0, sep),
                             .value = field.substr(sep + 1),
                             .literal = field[sep] == kLiteralSep});
  }
  return record;
}

}  // namespace roceqos
