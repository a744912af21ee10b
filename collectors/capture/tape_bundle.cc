#include "collectors/capture/tape_bundle.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <charconv>

namespace roceqos::tape {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kEmpty = "-";  // an empty byte string or list: a field is never empty
constexpr size_t kMaxLineBytes = size_t{64} * 1024 * 1024;

std::string_view AsText(const Blob& blob) {
  return {reinterpret_cast<const char*>(blob.data()), blob.size()};
}

Blob AsBlob(std::string_view text) {
  const auto* begin = reinterpret_cast<const std::byte*>(text.data());
  return Blob(begin, begin + text.size());
}

std::string Field(std::string_view bytes) {
  return bytes.empty() ? std::string(kEmpty) : Base64Encode(bytes);
}

Result<std::string> FieldBytes(std::string_view field) {
  if (field == kEmpty) return std::string();
  return Base64Decode(field);
}

std::vector<std::string_view> Split(std::string_view line, char sep) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t end = line.find(sep, start);
    fields.push_back(line.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
}

template <typename T>
Result<T> Number(std::string_view text, std::string_view what) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return MakeError(EINVAL, fmt::format("{} \"{}\" is not a number", what, text));
  }
  return value;
}

Result<Blob> BlobField(std::string_view field, std::string_view what) {
  Result<std::string> bytes = FieldBytes(field);
  if (!bytes) return MakeError(EINVAL, fmt::format("{}: {}", what, bytes.error().message));
  return AsBlob(*bytes);
}

Result<NetlinkExchange> ParseNetlink(const std::vector<std::string_view>& f) {
  if (f.size() != 7) return MakeError(EINVAL, "netlink: expected 6 fields");
  NetlinkExchange ex;
  auto protocol = Number<int>(f[1], "protocol");
  auto seq = Number<uint32_t>(f[2], "seq");
  auto port = Number<uint32_t>(f[3], "port id");
  auto errnum = Number<int>(f[4], "errno");
  auto request = BlobField(f[5], "request");
  if (!protocol || !seq || !port || !errnum || !request) {
    return MakeError(EINVAL, !protocol ? protocol.error().message
                             : !seq    ? seq.error().message
                             : !port   ? port.error().message
                             : !errnum ? errnum.error().message
                                       : request.error().message);
  }
  ex = NetlinkExchange{*protocol, *seq, *port, *errnum, std::move(*request), {}};
  if (f[6] == kEmpty) return ex;
  for (std::string_view reply : Split(f[6], ',')) {
    Result<Blob> datagram = BlobField(reply, "reply");
    if (!datagram) return datagram.error();
    ex.replies.push_back(std::move(*datagram));
  }
  return ex;
}

Result<IoctlExchange> ParseIoctl(const std::vector<std::string_view>& f) {
  if (f.size() != 5) return MakeError(EINVAL, "ioctl: expected 4 fields");
  auto ifname = Unescape(f[1]);
  auto errnum = Number<int>(f[2], "errno");
  auto in = BlobField(f[3], "in");
  auto out = BlobField(f[4], "out");
  if (!ifname) return ifname.error();
  if (!errnum) return errnum.error();
  if (!in) return in.error();
  if (!out) return out.error();
  return IoctlExchange{std::move(*ifname), *errnum, std::move(*in), std::move(*out)};
}

Result<FsEntry> ParseFs(const std::vector<std::string_view>& f) {
  if (f.size() != 5) return MakeError(EINVAL, "fs: expected 4 fields");
  auto path = Unescape(f[2]);
  auto errnum = Number<int>(f[3], "errno");
  auto data = FieldBytes(f[4]);
  if (!path) return path.error();
  if (!errnum) return errnum.error();
  if (!data) return MakeError(EINVAL, "data: " + data.error().message);
  return FsEntry{std::string(f[1]), std::move(*path), *errnum, std::move(*data)};
}

Result<void> ParseRecord(std::string_view line, Bundle& bundle) {
  const std::vector<std::string_view> f = Split(line, ' ');
  if (f[0] == "meta") {
    if (f.size() != 3) return MakeError(EINVAL, "meta: expected 2 fields");
    auto key = Unescape(f[1]);
    auto value = Unescape(f[2]);
    if (!key || !value) return !key ? key.error() : value.error();
    bundle.meta.emplace_back(std::move(*key), std::move(*value));
  } else if (f[0] == "netlink") {
    auto ex = ParseNetlink(f);
    if (!ex) return ex.error();
    bundle.netlink.push_back(std::move(*ex));
  } else if (f[0] == "ioctl") {
    auto ex = ParseIoctl(f);
    if (!ex) return ex.error();
    bundle.ioctls.push_back(std::move(*ex));
  } else if (f[0] == "fs") {
    auto entry = ParseFs(f);
    if (!entry) return entry.error();
    bundle.fs.push_back(std::move(*entry));
  } else {
    return MakeError(EINVAL, fmt::format("unknown record \"{}\"", Escape(f[0].substr(0, 32))));
  }
  return {};
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return MakeError(EINVAL, "base64 length is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t n = 0;
    int pad = 0;
    for (size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      const bool last_group = i + 4 == text.size();
      if (c == '=' && last_group && j >= 2 && (j == 3 || text[i + 3] == '=')) {
        ++pad;
        n <<= 6;
        continue;
      }
      const size_t v = kAlphabet.find(c);
      if (v == std::string_view::npos || pad > 0) {
        return MakeError(EINVAL, fmt::format("invalid base64 at offset {}", i + j));
      }
      n = (n << 6) | static_cast<uint32_t>(v);
    }
    out += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

std::string Escape(std::string_view text) {
  constexpr std::string_view kPlain = "._/:@+=,-";
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
        kPlain.find(c) != std::string_view::npos) {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out.empty() ? std::string(kEmpty) : out;
}

Result<std::string> Unescape(std::string_view text) {
  if (text == kEmpty) return std::string();
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    uint8_t value = 0;
    if (i + 2 >= text.size()) {
      return MakeError(EINVAL, "truncated percent escape");
    }
    auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
    if (ec != std::errc() || end != text.data() + i + 3) {
      return MakeError(EINVAL, "invalid percent escape");
    }
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

std::string Serialize(const Bundle& bundle) {
  std::string out = fmt::format("{} {}\n", kMagic, kVersion);
  for (const auto& [key, value] : bundle.meta) {
    out += fmt::format("meta {} {}\n", Escape(key), Escape(value));
  }
  for (const NetlinkExchange& ex : bundle.netlink) {
    std::string replies;
    for (const Blob& reply : ex.replies) {
      replies += (replies.empty() ? "" : ",") + Field(AsText(reply));
    }
    out += fmt::format("netlink {} {} {} {} {} {}\n", ex.protocol, ex.seq, ex.port_id, ex.errnum,
                       Field(AsText(ex.request)), replies.empty() ? kEmpty : replies);
  }
  for (const IoctlExchange& ex : bundle.ioctls) {
    out += fmt::format("ioctl {} {} {} {}\n", Escape(ex.ifname), ex.errnum, Field(AsText(ex.in)),
                       Field(AsText(ex.out)));
  }
  for (const FsEntry& entry : bundle.fs) {
    out += fmt::format("fs {} {} {} {}\n", entry.op, Escape(entry.path), entry.errnum,
                       Field(entry.data));
  }
  return out;
}

Result<Bundle> Parse(std::string_view text) {
  const std::string header = fmt::format("{} {}\n", kMagic, kVersion);
  if (!text.starts_with(header)) {
    return MakeError(EINVAL, fmt::format("not a capture bundle (the first line must be \"{} {}\")",
                                         kMagic, kVersion));
  }
  Bundle bundle;
  size_t line_number = 1;
  size_t pos = header.size();
  while (pos < text.size()) {
    ++line_number;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line.front() == '#') continue;
    if (line.size() > kMaxLineBytes) {
      return MakeError(EINVAL, fmt::format("line {}: longer than 64 MiB", line_number));
    }
    if (Result<void> parsed = ParseRecord(line, bundle); !parsed) {
      return MakeError(EINVAL, fmt::format("line {}: {}", line_number, parsed.error().message));
    }
  }
  return bundle;
}

}  // namespace roceqos::tape
