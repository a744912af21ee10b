#include "exporter/http/request_head.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace roceqos {

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

namespace {

HeadParse Refuse(int status, std::string why) {
  HeadParse p;
  p.kind = HeadParse::Kind::kRefused;
  p.status = status;
  p.why = std::move(why);
  return p;
}

// RFC 9110 §5.6.2 tchar.
bool IsTokenChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar);
}

// A field value's bytes: visible, SP, HTAB and obs-text (RFC 9110 §5.5); no other control byte.
bool IsFieldValue(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u == '\t' || u >= 0x20 ? u != 0x7f : false;
  });
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  const int lower = std::tolower(static_cast<unsigned char>(c));
  return lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : -1;
}

// RFC 3986 §2.1 percent-decoding of the path; nullopt on a malformed escape or a decoded NUL.
std::optional<std::string> DecodePath(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      out += encoded[i];
      continue;
    }
    if (i + 2 >= encoded.size()) return std::nullopt;
    const int hi = HexDigit(encoded[i + 1]), lo = HexDigit(encoded[i + 2]);
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// One line of the head without its terminator (CRLF or LF); nullopt when a CR stands alone.
std::optional<std::string_view> StripLineEnd(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find('\r') != std::string_view::npos) return std::nullopt;
  return line;
}

// `METHOD SP request-target SP HTTP-version` (RFC 9112 §3), origin-form targets only.
std::optional<HeadParse> ParseRequestLine(std::string_view line, RequestHead& head) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Refuse(400, "malformed request line");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Refuse(400, "malformed method");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[5])) ||
      !std::isdigit(static_cast<unsigned char>(version[7]))) {
    return Refuse(400, "malformed HTTP version");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return Refuse(505, "only HTTP/1.0 and HTTP/1.1 are served");
  }
  const bool visible = std::all_of(target.begin(), target.end(), [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (target.empty() || target.front() != '/' || !visible) {
    return Refuse(400, "the request target must be a path starting with /");
  }
  const size_t question = target.find('?');
  std::optional<std::string> path = DecodePath(target.substr(0, question));
  if (!path) return Refuse(400, "malformed percent-encoding in the path");
  head.method = method;
  head.path = std::move(*path);
  head.query = question == std::string_view::npos ? "" : target.substr(question + 1);
  return std::nullopt;
}

// One `name: value` field line (RFC 9112 §5); keeps what the routes read.
std::optional<HeadParse> ParseField(std::string_view line, RequestHead& head,
                                    std::optional<size_t>& content_length, size_t max_body_bytes) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
    // Also a line folded onto the previous one (obs-fold, RFC 9112 §5.2), which starts with
    // whitespace and so has no token before the colon.
    return Refuse(400, "malformed header line");
  }
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = TrimOws(line.substr(colon + 1));
  if (!IsFieldValue(value)) return Refuse(400, "control character in a header value");
  if (EqualsNoCase(name, "Accept-Encoding")) {
    if (!head.accept_encoding.empty()) head.accept_encoding += ", ";  // RFC 9110 §5.3: a list
    head.accept_encoding += value;
  } else if (EqualsNoCase(name, "Transfer-Encoding")) {
    return Refuse(501, "request bodies with Transfer-Encoding are not supported");
  } else if (EqualsNoCase(name, "Content-Length")) {
    size_t length = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
        (content_length && *content_length != length)) {
      return Refuse(400, "malformed Content-Length");  // RFC 9112 §6.3 item 5
    }
    if (length > max_body_bytes) return Refuse(413, "request body too large");
    content_length = length;
  }
  return std::nullopt;
}

}  // namespace

HeadParse ParseRequestHead(std::string_view received, size_t max_head_bytes,
                           size_t max_body_bytes) {
  // RFC 9112 §2.2: empty lines before the request line are ignored.
  size_t start = 0;
  while (start < received.size() && (received[start] == '\r' || received[start] == '\n')) ++start;
  RequestHead head;
  std::optional<size_t> content_length;
  bool request_line = true;
  for (size_t pos = start;;) {
    const size_t newline = received.find('\n', pos);
    const size_t line_end = newline == std::string_view::npos ? received.size() : newline + 1;
    if (line_end > max_head_bytes) {
      return Refuse(request_line ? 414 : 431,
                    request_line ? "request line too long" : "request header fields too large");
    }
    if (newline == std::string_view::npos) return {};  // kIncomplete
    const std::optional<std::string_view> line = StripLineEnd(received.substr(pos, newline - pos));
    pos = newline + 1;
    if (!line) return Refuse(400, "bare CR in the request head");
    if (request_line) {
      if (auto refused = ParseRequestLine(*line, head)) return std::move(*refused);
      request_line = false;
      continue;
    }
    if (line->empty()) {
      head.head_bytes = pos;
      head.content_length = content_length.value_or(0);
      HeadParse p;
      p.kind = HeadParse::Kind::kComplete;
      p.head = std::move(head);
      return p;
    }
    if (auto refused = ParseField(*line, head, content_length, max_body_bytes)) {
      return std::move(*refused);
    }
  }
}

}  // namespace roceqos
