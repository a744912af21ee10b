#pragma once

// Field helpers shared by the SFF-8636 and CMIS decoders: big-endian words, the specs' units,
// ASCII fields. Internal to collectors/transceiver/ (sff8636.cc, cmis.cc).

#include <cstdint>
#include <span>
#include <string>

#include "collectors/transceiver/transceiver.h"

namespace roceqos::module_fields {

/// Both specs store multi-byte values MSB first at the lower address.
inline uint16_t U16(std::span<const uint8_t> page, size_t offset) {
  return static_cast<uint16_t>((page[offset] << 8) | page[offset + 1]);
}

/// Temperature: signed 16-bit, 1/256 °C (SFF-8636 §6.2.4, CMIS Table 8-9).
inline double Celsius(std::span<const uint8_t> page, size_t offset) {
  return static_cast<int16_t>(U16(page, offset)) / 256.0;
}
/// Supply voltage: unsigned 16-bit, 100 µV.
inline double Volts(std::span<const uint8_t> page, size_t offset) {
  return U16(page, offset) * 100e-6;
}
/// Optical power: unsigned 16-bit, 0.1 µW.
inline double Watts(std::span<const uint8_t> page, size_t offset) {
  return U16(page, offset) * 1e-7;
}
/// Laser bias: unsigned 16-bit, 2 µA (times the CMIS multiplier).
inline double Amperes(std::span<const uint8_t> page, size_t offset, unsigned multiplier = 1) {
  return U16(page, offset) * 2e-6 * multiplier;
}

/// Four consecutive 16-bit thresholds: high alarm, low alarm, high warning, low warning (the order
/// of both specs' threshold tables), converted with `unit`.
template <typename Unit>
MonitorThresholds Thresholds(std::span<const uint8_t> page, size_t offset, Unit unit) {
  return {unit(page, offset), unit(page, offset + 2), unit(page, offset + 4),
          unit(page, offset + 6)};
}

/// An ASCII field of `length` bytes: trailing spaces/NULs dropped, non-printables as '?'.
std::string Ascii(std::span<const uint8_t> page, size_t offset, size_t length);

/// Upper-page bytes are addressed as in the specs (128-255); this is the index into the
/// 128-byte half page.
constexpr size_t Up(size_t spec_byte) { return spec_byte - kModuleHalfPage; }

}  // namespace roceqos::module_fields
