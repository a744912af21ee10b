#include "exporter/render/gzip.h"

#include <zlib.h>

#include <new>

namespace roceqos {
namespace {

// deflateInit2/inflateInit2 windowBits: 15 (32 KiB window) + 16 selects the gzip wrapper
// (zlib.h), not the zlib one that "deflate" in HTTP would be.
constexpr int kGzipWindowBits = 15 + 16;

}  // namespace

std::string GzipCompress(std::string_view text) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::bad_alloc();
  }
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  // deflateBound() room: one Z_FINISH call completes the stream.
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw std::bad_alloc();
  return out;
}

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
