#pragma once

// Page images for the transceiver decoders: the fixture text format of tests/fixtures/transceiver
// and a builder that writes fields at the specs' byte offsets.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "collectors/transceiver/transceiver.h"

namespace roceqos::testing_support {

/// "[lower]" / "[page NN]" (hex page number) sections of hex bytes; '#' lines are comments.
/// Each section must hold exactly 128 bytes.
Result<ModulePages> ParseModulePagesText(std::string_view text);
Result<ModulePages> LoadModulePagesFixture(const std::string& name);  // under ROCEQOS_FIXTURES_DIR

/// Writes into a half page at the spec's byte number (0-127 lower, 128-255 upper).
class PageWriter {
 public:
  explicit PageWriter(std::vector<uint8_t>& page) : page_(page) { page_.resize(kModuleHalfPage); }
  PageWriter& Byte(size_t spec_byte, uint8_t v);
  PageWriter& U16(size_t spec_byte, uint16_t v);                              // MSB first
  PageWriter& Ascii(size_t spec_byte, size_t length, std::string_view text);  // space padded

 private:
  size_t Index(size_t spec_byte) const { return spec_byte % kModuleHalfPage; }
  std::vector<uint8_t>& page_;
};

}  // namespace roceqos::testing_support
