#include "base/log_event.h"

namespace roceqos {
namespace {

// ASCII unit and record separators: a message or value holding one has it replaced, so a kernel
// string can never forge a field.
constexpr char kFieldSep = '\x1e';
constexpr char kValueSep = '\x1f';

void AppendClean(std::string& out, std::string_view text) {
  for (char c : text) out.push_back(c == kFieldSep || c == kValueSep ? '?' : c);
}

}  // namespace

std::string EncodeLogRecord(std::string_view msg, std::initializer_list<LogField> fields) {
  std::string out;
  AppendClean(out, msg);
  for (const LogField& f : fields) {
    out.push_back(kFieldSep);
    AppendClean(out, f.key);
    out.push_back(kValueSep);
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
    const size_t sep = field.find(kValueSep);
    if (sep == std::string_view::npos) continue;  // not one of ours: dropped rather than misread
    record.fields.emplace_back(field.substr(0, sep), field.substr(sep + 1));
  }
  return record;
}

}  // namespace roceqos
