#include "collectors/netlink/attr.h"

#include <fmt/format.h>
#include <linux/netlink.h>

#include <string>

#include "base/enum_names.h"

namespace roceqos::netlink {
namespace {

std::string AttrName(Policy policy, uint16_t type) {
  if (type < policy.size() && !policy[type].name.empty()) {
    return fmt::format("{} (type {})", policy[type].name, type);
  }
  return fmt::format("type {}", type);
}

Error Malformed(std::string_view context, std::string detail) {
  return MakeError(0, fmt::format("{}: malformed attribute: {}", context, detail));
}

/// Walks an attribute stream, checking each header against the bytes that are really there,
/// and calls fn(type, payload) for every attribute. `names` only labels error messages.
template <typename Fn>
Result<void> Walk(Bytes stream, std::string_view context, Policy names, Fn&& fn) {
  size_t offset = 0;
  while (offset < stream.size()) {
    const size_t left = stream.size() - offset;
    if (left < NLA_HDRLEN) {
      return Malformed(context, fmt::format("truncated attribute header at offset {}: {} byte(s) "
                                            "left, a header needs {}",
                                            offset, left, NLA_HDRLEN));
    }
    nlattr header;
    std::memcpy(&header, stream.data() + offset, sizeof(header));
    const auto type = static_cast<uint16_t>(header.nla_type & NLA_TYPE_MASK);
    if (header.nla_len < NLA_HDRLEN) {
      return Malformed(context,
                       fmt::format("{} at offset {}: nla_len {} is below the {}-byte "
                                   "header",
                                   AttrName(names, type), offset, header.nla_len, NLA_HDRLEN));
    }
    if (header.nla_len > left) {
      return Malformed(context, fmt::format("{} at offset {}: nla_len {} exceeds the {} byte(s) "
                                            "left in the payload",
                                            AttrName(names, type), offset, header.nla_len, left));
    }
    Result<void> step = fn(type, stream.subspan(offset + NLA_HDRLEN, header.nla_len - NLA_HDRLEN));
    if (!step) return step;
    offset += NLA_ALIGN(header.nla_len);  // the last attribute may omit its padding
  }
  return {};
}

constexpr EnumName<AttrKind> kKindNames[] = {
    {AttrKind::kU8, "u8"},         {AttrKind::kU16, "u16"},       {AttrKind::kU32, "u32"},
    {AttrKind::kU64, "u64"},       {AttrKind::kString, "string"}, {AttrKind::kBinary, "binary"},
    {AttrKind::kNested, "nested"}, {AttrKind::kFlag, "flag"},     {AttrKind::kIgnore, "ignored"},
};

std::string_view KindName(AttrKind kind) { return NameOf(kKindNames, kind, "ignored"); }

/// Checks one payload against its policy entry; returns a description of the violation or an
/// empty string.
std::string Violation(const AttrPolicy& policy, Bytes payload) {
  const size_t len = payload.size();
  switch (policy.kind) {
    case AttrKind::kU8:
    case AttrKind::kU16:
    case AttrKind::kU32:
    case AttrKind::kU64:
    case AttrKind::kFlag:
      if (len != policy.min_len) {
        return fmt::format("{} payload is {} byte(s), expected {}", KindName(policy.kind), len,
                           policy.min_len);
      }
      return {};
    case AttrKind::kString: {
      const void* nul = len == 0 ? nullptr : std::memchr(payload.data(), 0, len);
      if (nul == nullptr) return fmt::format("string of {} byte(s) has no terminating NUL", len);
      const auto text_len =
          static_cast<size_t>(static_cast<const std::byte*>(nul) - payload.data());
      if (text_len + 1 < policy.min_len) {
        return fmt::format("string is {} character(s), expected at least {}", text_len,
                           policy.min_len - 1);
      }
      if (policy.max_len != 0 && len > policy.max_len) {
        return fmt::format("string of {} byte(s) exceeds the maximum of {}", len, policy.max_len);
      }
      return {};
    }
    case AttrKind::kBinary:
      if (len < policy.min_len || (policy.max_len != 0 && len > policy.max_len)) {
        if (policy.min_len == policy.max_len) {
          return fmt::format("payload is {} byte(s), expected exactly {}", len, policy.min_len);
        }
        return fmt::format(
            "payload is {} byte(s), expected {}..{}", len, policy.min_len,
            policy.max_len == 0 ? std::string("any") : std::to_string(policy.max_len));
      }
      return {};
    case AttrKind::kNested:
    case AttrKind::kIgnore:
      return {};
  }
  return {};
}

}  // namespace

Result<Attrs> Attrs::Parse(Bytes payload, Policy policy, std::string_view context) {
  Attrs attrs;
  Result<void> walked =
      Walk(payload, context, policy, [&](uint16_t type, Bytes value) -> Result<void> {
        if (type >= policy.size() || policy[type].kind == AttrKind::kIgnore) return {};
        std::string violation = Violation(policy[type], value);
        if (!violation.empty()) {
          return Malformed(context, fmt::format("{}: {}", AttrName(policy, type), violation));
        }
        attrs.Store(Slot{value.data(), static_cast<uint16_t>(value.size()), type});
        return {};
      });
  if (!walked) return walked.error();
  for (uint16_t type : policy.required()) {
    if (!attrs.Has(type)) {
      return MakeError(
          0, fmt::format("{}: missing required attribute {}", context, AttrName(policy, type)));
    }
  }
  return attrs;
}

const Attrs::Slot* Attrs::Find(uint16_t type) const {
  for (size_t i = 0; i < inline_count_; ++i) {
    if (inline_[i].type == type) return &inline_[i];
  }
  for (const Slot& slot : overflow_) {
    if (slot.type == type) return &slot;
  }
  return nullptr;
}

void Attrs::Store(const Slot& slot) {
  for (size_t i = 0; i < inline_count_; ++i) {
    if (inline_[i].type == slot.type) {
      inline_[i] = slot;  // a repeated type: the last occurrence wins
      return;
    }
  }
  for (Slot& existing : overflow_) {
    if (existing.type == slot.type) {
      existing = slot;
      return;
    }
  }
  if (inline_count_ < kInlineSlots) {
    inline_[inline_count_++] = slot;
  } else {
    overflow_.push_back(slot);
  }
}

Bytes Attrs::Raw(uint16_t type) const {
  const Slot* slot = Find(type);
  if (slot == nullptr) return {};
  return Bytes(slot->data, slot->len);
}

std::optional<std::string_view> Attrs::String(uint16_t type) const {
  const Slot* slot = Find(type);
  if (slot == nullptr) return std::nullopt;
  const char* text = reinterpret_cast<const char*>(slot->data);
  // Parse guaranteed a NUL inside the payload when the policy said kString; a caller asking for
  // a string the policy did not declare still never reads past the payload.
  const void* nul = slot->len == 0 ? nullptr : std::memchr(text, 0, slot->len);
  if (nul == nullptr) return std::nullopt;
  return std::string_view(text, static_cast<const char*>(nul) - text);
}

Result<Attrs> Attrs::Nested(uint16_t type, Policy policy, std::string_view context) const {
  return Parse(Raw(type), policy, context);
}

Result<void> ForEachAttr(Bytes stream, std::string_view context,
                         const std::function<Result<void>(uint16_t type, Bytes payload)>& fn) {
  return Walk(stream, context, Policy{}, fn);
}

}  // namespace roceqos::netlink
