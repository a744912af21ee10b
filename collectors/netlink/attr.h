#pragma once

// Table-driven netlink attribute validation. Every attribute of a reply is checked against a
// policy (type and length) before any value is read; values are memcpy'd, never cast, because
// netlink payloads are only 4-byte aligned and UAPI structs (ieee_pfc, ieee_maxrate) hold u64s.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "collectors/result.h"

namespace roceqos::netlink {

using Bytes = std::span<const std::byte>;

enum class AttrKind : uint8_t {
  kIgnore,   // not in the policy: skipped (newer kernels add attributes)
  kU8,
  kU16,
  kU32,
  kU64,
  kString,   // NUL-terminated, payload length <= max_len when max_len != 0
  kBinary,   // payload length in [min_len, max_len] (max_len 0 = unbounded)
  kNested,   // payload is itself a stream of attributes
  kFlag,     // zero-length payload
};

struct AttrPolicy {
  AttrKind kind = AttrKind::kIgnore;
  uint16_t min_len = 0;
  uint16_t max_len = 0;
};

/// A policy indexed by attribute type: policy[type]. Types beyond the table are ignored.
using Policy = std::span<const AttrPolicy>;

/// The attributes of one message or nest after validation. Holds views into the caller's buffer,
/// which must outlive it. When a type repeats, the last occurrence wins for the scalar getters;
/// use ForEachAttr for lists (APP table entries, hw counter entries).
class Attrs {
 public:
  /// Validates every attribute in `payload` against `policy`; the first violation is an Error
  /// naming `context`, the attribute type and what was wrong (truncated header, length beyond the
  /// payload, wrong length for its kind, string without NUL, ...).
  static Result<Attrs> Parse(Bytes payload, Policy policy, std::string_view context);

  bool Has(uint16_t type) const;
  Bytes Raw(uint16_t type) const;  // empty span when absent
  std::optional<uint8_t> U8(uint16_t type) const;
  std::optional<uint16_t> U16(uint16_t type) const;
  std::optional<uint32_t> U32(uint16_t type) const;
  std::optional<uint64_t> U64(uint16_t type) const;
  std::optional<std::string_view> String(uint16_t type) const;  // without the NUL

  /// Copies a fixed-size UAPI struct; false unless the payload is exactly sizeof(T).
  template <typename T>
  bool CopyStruct(uint16_t type, T* out) const {
    Bytes raw = Raw(type);
    if (raw.size() != sizeof(T)) return false;
    std::memcpy(out, raw.data(), sizeof(T));
    return true;
  }

  /// Parses a nested attribute with its own policy.
  Result<Attrs> Nested(uint16_t type, Policy policy, std::string_view context) const;

 private:
  std::vector<Bytes> by_type_;  // index = attribute type (NLA_TYPE_MASK applied)
};

/// Calls fn(type, payload) for each attribute in a stream, after checking each header and length.
/// Used for lists where a type repeats. Stops at and returns the first error (from the stream or
/// from fn).
Result<void> ForEachAttr(Bytes stream, std::string_view context,
                         const std::function<Result<void>(uint16_t type, Bytes payload)>& fn);

}  // namespace roceqos::netlink
