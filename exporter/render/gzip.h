#pragma once

#include <string>
#include <string_view>
#include <vector>

struct libdeflate_compressor;

namespace roceqos {

/// gzip (RFC 1952) of the exposition, what Content-Encoding: gzip carries: libdeflate at its
/// fastest level, which keeps the body within 7-11 % of the plain text for the bodies this
/// exporter serves at a fraction of zlib's time (figures: docs/decisions.md). The compressor's
/// state is allocated once (allocating it costs more than compressing a small body), so one
/// instance serves one thread at a time. Allocation failure throws std::bad_alloc.
class GzipCompressor {
 public:
  GzipCompressor();
  ~GzipCompressor();
  GzipCompressor(const GzipCompressor&) = delete;
  GzipCompressor& operator=(const GzipCompressor&) = delete;

  std::string Compress(std::string_view text);

 private:
  libdeflate_compressor* compressor_;
  std::vector<char> buffer_;  // the compressor's output room, kept between calls
};

/// One-shot GzipCompressor().Compress(text).
std::string GzipCompress(std::string_view text);

/// The inverse (zlib, independent of the compressor), for tests and the benchmark; an Error
/// message for input that is not gzip.
bool GzipDecompress(std::string_view gzip, std::string& out, std::string& error);

}  // namespace roceqos
