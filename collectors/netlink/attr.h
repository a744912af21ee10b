#pragma once

// Table-driven netlink attribute validation. Every attribute of a reply is checked against a
// policy (type and length) before any value is read; values are memcpy'd, never cast, because
// netlink payloads are only 4-byte aligned and UAPI structs (ieee_pfc, ieee_maxrate) hold u64s.
// The byte spans handed in may come from a recorded file at any alignment, so attribute headers
// are memcpy'd too instead of walking them through libmnl's struct nlattr pointers.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace roceqos::netlink {

using Bytes = std::span<const std::byte>;

enum class AttrKind : uint8_t {
  kIgnore,  // not in the policy: skipped (newer kernels add attributes)
  kU8,
  kU16,
  kU32,
  kU64,
  kString,  // contains a NUL; text+NUL >= min_len; payload length <= max_len when max_len != 0
  kBinary,  // payload length in [min_len, max_len] (max_len 0 = unbounded)
  kNested,  // payload is itself a stream of attributes (validated when Nested() parses it)
  kFlag,    // zero-length payload
};

struct AttrPolicy {
  AttrKind kind = AttrKind::kIgnore;
  uint16_t min_len = 0;
  uint16_t max_len = 0;
  bool required = false;  // Parse fails when the attribute is absent
  std::string_view name;  // UAPI symbol, used in error messages ("IFLA_MTU")
};

/// Constructors for policy entries, so tables read like the UAPI comments they come from.
namespace attr {
constexpr AttrPolicy U8(std::string_view name) { return {AttrKind::kU8, 1, 1, false, name}; }
constexpr AttrPolicy U16(std::string_view name) { return {AttrKind::kU16, 2, 2, false, name}; }
constexpr AttrPolicy U32(std::string_view name) { return {AttrKind::kU32, 4, 4, false, name}; }
constexpr AttrPolicy U64(std::string_view name) { return {AttrKind::kU64, 8, 8, false, name}; }
/// max_len counts the terminating NUL (IFNAMSIZ for interface names); 0 = unbounded.
constexpr AttrPolicy String(std::string_view name, uint16_t max_len = 0) {
  return {AttrKind::kString, 1, max_len, false, name};
}
/// A name: like String, but the text before the NUL must not be empty.
constexpr AttrPolicy NonEmptyString(std::string_view name, uint16_t max_len = 0) {
  return {AttrKind::kString, 2, max_len, false, name};
}
constexpr AttrPolicy Binary(std::string_view name, uint16_t min_len, uint16_t max_len) {
  return {AttrKind::kBinary, min_len, max_len, false, name};
}
/// A fixed-size UAPI struct: the payload must be exactly sizeof(T).
template <typename T>
constexpr AttrPolicy Struct(std::string_view name) {
  static_assert(sizeof(T) <= 0xffff - 4);
  return {AttrKind::kBinary, static_cast<uint16_t>(sizeof(T)), static_cast<uint16_t>(sizeof(T)),
          false, name};
}
constexpr AttrPolicy Nested(std::string_view name) {
  return {AttrKind::kNested, 0, 0, false, name};
}
constexpr AttrPolicy Flag(std::string_view name) { return {AttrKind::kFlag, 0, 0, false, name}; }
constexpr AttrPolicy Required(AttrPolicy policy) {
  policy.required = true;
  return policy;
}
}  // namespace attr

/// A policy table of N entries (N = FOO_MAX + 1) and the types it requires, precomputed so that
/// Parse checks presence without scanning the table. Build it with MakePolicy.
template <size_t N>
struct PolicyTable {
  std::array<AttrPolicy, N> entries{};
  std::array<uint16_t, N> required{};
  size_t required_count = 0;
};

/// Builds a policy table from {type, policy} pairs; unlisted types are kIgnore. A type >= N does
/// not compile when used in a constexpr initializer.
template <size_t N>
constexpr PolicyTable<N> MakePolicy(
    std::initializer_list<std::pair<uint16_t, AttrPolicy>> entries) {
  PolicyTable<N> table{};
  for (const auto& [type, policy] : entries) {
    if (type >= N) throw "attribute type beyond the policy table";  // constexpr: compile error
    table.entries[type] = policy;
  }
  for (size_t type = 0; type < N; ++type) {
    if (table.entries[type].required) table.required[table.required_count++] = uint16_t(type);
  }
  return table;
}

/// A view of a policy indexed by attribute type: policy[type]. Types beyond it are ignored.
class Policy {
 public:
  constexpr Policy() = default;
  template <size_t N>
  constexpr Policy(const PolicyTable<N>& table)  // NOLINT(google-explicit-constructor)
      : entries_(table.entries), required_(table.required.data(), table.required_count) {}

  constexpr size_t size() const { return entries_.size(); }
  constexpr const AttrPolicy& operator[](size_t type) const { return entries_[type]; }
  constexpr std::span<const uint16_t> required() const { return required_; }

 private:
  std::span<const AttrPolicy> entries_;
  std::span<const uint16_t> required_;
};

/// The attributes of one message or nest after validation. Holds views into the caller's buffer,
/// which must outlive it. When a type repeats, the last occurrence wins for the scalar getters;
/// use ForEachAttr for lists (APP table entries, hw counter entries).
class Attrs {
 public:
  /// Validates every attribute in `payload` against `policy`; the first violation is an Error
  /// naming `context`, the attribute (UAPI name and type) and what was wrong (truncated header,
  /// nla_len below 4 or beyond the payload, wrong length for its kind, string without NUL,
  /// missing required attribute, ...). errnum is 0: malformed input has no errno.
  static Result<Attrs> Parse(Bytes payload, Policy policy, std::string_view context);

  bool Has(uint16_t type) const { return Find(type) != nullptr; }
  Bytes Raw(uint16_t type) const;  // empty span when absent
  std::optional<uint8_t> U8(uint16_t type) const { return Scalar<uint8_t>(type); }
  std::optional<uint16_t> U16(uint16_t type) const { return Scalar<uint16_t>(type); }
  std::optional<uint32_t> U32(uint16_t type) const { return Scalar<uint32_t>(type); }
  std::optional<uint64_t> U64(uint16_t type) const { return Scalar<uint64_t>(type); }
  std::optional<std::string_view> String(uint16_t type) const;  // up to the first NUL

  /// Copies a fixed-size UAPI struct; false unless the payload is exactly sizeof(T).
  template <typename T>
  bool CopyStruct(uint16_t type, T* out) const {
    Bytes raw = Raw(type);
    if (raw.size() != sizeof(T)) return false;
    std::memcpy(out, raw.data(), sizeof(T));
    return true;
  }

  /// Parses a nested attribute with its own policy. An absent nest parses as empty (so required
  /// attributes inside it are reported missing); use Has() first when absence is fine.
  Result<Attrs> Nested(uint16_t type, Policy policy, std::string_view context) const;

 private:
  struct Slot {
    const std::byte* data = nullptr;
    uint16_t len = 0;
    uint16_t type = 0;
  };
  static constexpr size_t kInlineSlots = 8;

  const Slot* Find(uint16_t type) const;
  void Store(const Slot& slot);

  template <typename T>
  std::optional<T> Scalar(uint16_t type) const {
    const Slot* slot = Find(type);
    if (slot == nullptr || slot->len != sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, slot->data, sizeof(T));
    return value;
  }

  // Most messages and nests carry a handful of attributes we care about: keep them inline so
  // parsing a hw counter entry per sample allocates nothing.
  std::array<Slot, kInlineSlots> inline_{};
  size_t inline_count_ = 0;
  std::vector<Slot> overflow_;
};

/// Calls fn(type, payload) for each attribute in a stream, after checking each header and length
/// (type has NLA_F_NESTED / NLA_F_NET_BYTEORDER masked off). Used for lists where a type repeats.
/// Stops at and returns the first error (from the stream or from fn).
Result<void> ForEachAttr(Bytes stream, std::string_view context,
                         const std::function<Result<void>(uint16_t type, Bytes payload)>& fn);

}  // namespace roceqos::netlink
