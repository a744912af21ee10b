// Shared helpers for the libFuzzer targets (scripts/fuzz). Each target feeds the raw input to one
// parser of outside input; the parser must return a value or an Error, never crash or read out of
// bounds (the targets are built with ASan+UBSan).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace roceqos::fuzz {

inline std::span<const std::byte> AsBytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

}  // namespace roceqos::fuzz
