#pragma once

// SFF-8636 (QSFP+/QSFP28/QSFP56 management interface) decoder. Offsets are the spec's: lower page
// bytes 0-127, upper page 00h and 03h bytes 128-255.

#include <cstdint>

#include "base/result.h"
#include "collectors/transceiver/transceiver.h"

namespace roceqos {

/// SFF-8024 identifiers managed through SFF-8636: 0x0C QSFP, 0x0D QSFP+, 0x11 QSFP28 (and QSFP56
/// modules that did not move to CMIS).
bool IsSff8636Identifier(uint8_t identifier);

/// Decodes identity, monitors, the module's flags and (with upper page 03h) its thresholds.
/// Needs `pages.lower` and upper page 00h (128 bytes each); page 03h is optional (flat-memory
/// modules have none). Errors (errnum 0 for malformed input): short or missing pages, an
/// identifier that is not SFF-8636 (EMEDIUMTYPE).
Result<Transceiver> DecodeSff8636(const ModulePages& pages);

}  // namespace roceqos
