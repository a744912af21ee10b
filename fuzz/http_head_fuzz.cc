// The request-head parser (exporter/http/request_head.h) over raw bytes, as the server's event
// loop calls it on whatever a client sent. Besides never crashing: a complete head lies within the
// input and the limits, its path starts with '/' and holds no NUL, and parsing exactly its bytes
// gives the same head (the loop may call it on a buffer that already holds part of the body).
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "exporter/http/request_head.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using roceqos::HeadParse;
  constexpr size_t kMaxHead = 512, kMaxBody = 64;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const HeadParse parsed = roceqos::ParseRequestHead(input, kMaxHead, kMaxBody);
  if (parsed.kind == HeadParse::Kind::kRefused) {
    if (parsed.status < 400 || parsed.status > 599 || parsed.why.empty()) __builtin_trap();
    return 0;
  }
  if (parsed.kind == HeadParse::Kind::kIncomplete) {
    if (size > kMaxHead) __builtin_trap();  // a head past the limit is refused, never awaited
    return 0;
  }
  const roceqos::RequestHead& head = parsed.head;
  if (head.head_bytes > size || head.head_bytes > kMaxHead || head.content_length > kMaxBody ||
      head.path.empty() || head.path.front() != '/' ||
      head.path.find('\0') != std::string_view::npos || head.method.empty()) {
    __builtin_trap();
  }
  const HeadParse again =
      roceqos::ParseRequestHead(input.substr(0, head.head_bytes), kMaxHead, kMaxBody);
  if (again.kind != HeadParse::Kind::kComplete || again.head.path != head.path ||
      again.head.query != head.query || again.head.head_bytes != head.head_bytes) {
    std::fprintf(stderr, "http_head_fuzz: the head's own bytes parse differently\n");
    __builtin_trap();
  }
  return 0;
}
