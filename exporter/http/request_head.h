#pragma once

// The head of one HTTP/1.x request (RFC 9112 §2-§6), parsed from the bytes a client sent so far.
// Outside input: every byte comes from whoever reaches the listen address (fuzz/http_head_fuzz.cc).
// Only what the exporter's routes read is kept; the server answers every request with
// `Connection: close`, so there is no keep-alive and no pipelining to parse.

#include <cstddef>
#include <string>
#include <string_view>

namespace roceqos {

struct RequestHead {
  std::string method;           // the token before the first space, as sent ("GET")
  std::string path;             // percent-decoded, without the query string; starts with '/'
  std::string query;            // after '?', still percent-encoded; empty when absent
  std::string accept_encoding;  // the Accept-Encoding header, empty when absent
  size_t head_bytes = 0;        // request line + headers + the blank line
  size_t content_length = 0;    // the body that follows the head (Content-Length)
};

struct HeadParse {
  enum class Kind { kIncomplete, kComplete, kRefused };
  Kind kind = Kind::kIncomplete;
  RequestHead head;  // kComplete
  int status = 0;    // kRefused: 400, 413, 431, 501, 505
  std::string why;   // kRefused: the reason, sent as the body
};

/// Parses `received` (everything read so far). kIncomplete until the blank line ending the head
/// arrives; a head longer than `max_head_bytes`, or a body longer than `max_body_bytes`, is
/// refused; so is anything that is not `METHOD /origin-form HTTP/1.x` with well-formed headers.
/// Lines end in CRLF or a bare LF (RFC 9112 §2.2 lets a recipient accept LF).
HeadParse ParseRequestHead(std::string_view received, size_t max_head_bytes, size_t max_body_bytes);

/// `s` without the optional whitespace (spaces and tabs, RFC 9110 §5.6.3) around it.
std::string_view TrimOws(std::string_view s);

/// Whether two header tokens are equal ignoring ASCII case (field names, codings).
bool EqualsNoCase(std::string_view a, std::string_view b);

}  // namespace roceqos
