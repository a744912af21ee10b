#pragma once

#include <string>
#include <string_view>

namespace roceqos {

/// `text` as one gzip member (RFC 1952) at zlib's default level; what Content-Encoding: gzip
/// carries. zlib only fails on memory exhaustion, which throws std::bad_alloc like the rest.
std::string GzipCompress(std::string_view text);

/// The inverse, for tests and the benchmark; an Error message for input that is not gzip.
bool GzipDecompress(std::string_view gzip, std::string& out, std::string& error);

}  // namespace roceqos
