#include "exporter/render/gzip.h"

#include <libdeflate.h>
#include <zlib.h>

#include <new>

namespace roceqos {
namespace {

// inflateInit2 windowBits: 15 (32 KiB window) + 16 selects the gzip wrapper (zlib.h), not the
// zlib one that "deflate" in HTTP would be.
constexpr int kGzipWindowBits = 15 + 16;

// libdeflate's levels run 0-12; 1 is its fastest (docs/decisions.md has the measured sizes).
constexpr int kGzipLevel = 1;

}  // namespace

GzipCompressor::GzipCompressor() : compressor_(libdeflate_alloc_compressor(kGzipLevel)) {
  if (compressor_ == nullptr) throw std::bad_alloc();
}

GzipCompressor::~GzipCompressor() { libdeflate_free_compressor(compressor_); }

std::string GzipCompressor::Compress(std::string_view text) {
  buffer_.resize(libdeflate_gzip_compress_bound(compressor_, text.size()));
  // The bound leaves room for any input, so 0 (no room) cannot happen.
  const size_t size = libdeflate_gzip_compress(compressor_, text.data(), text.size(),
                                               buffer_.data(), buffer_.size());
  if (size == 0) throw std::bad_alloc();
  return std::string(buffer_.data(), size);
}

std::string GzipCompress(std::string_view text) { return GzipCompressor().Compress(text); }

bool GzipDecompress(std::string_view gzip, std::string& out, std::string& error) {
  z_stream stream{};
  if (inflateInit2(&stream, kGzipWindowBits) != Z_OK) throw std::bad_alloc();
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gzip.data()));
  stream.avail_in = static_cast<uInt>(gzip.size());
  out.clear();
  char buffer[64 * 1024];
  int rc = Z_OK;
  while (rc == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
    if (rc == Z_BUF_ERROR && stream.avail_in == 0) break;  // truncated input
  }
  if (rc != Z_STREAM_END) error = stream.msg != nullptr ? stream.msg : "truncated gzip stream";
  inflateEnd(&stream);
  return rc == Z_STREAM_END;
}

}  // namespace roceqos
