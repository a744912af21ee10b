#pragma once

// CMIS (Common Management Interface Specification, QSFP-DD/OSFP/QSFP112) decoder, revisions 3.0
// to 5.x. Offsets are the spec's: lower page bytes 0-127; upper pages 00h, 01h, 02h and 11h
// (bank 0, lanes 1-8) bytes 128-255.

#include <cstdint>

#include "base/result.h"
#include "collectors/transceiver/transceiver.h"

namespace roceqos {

/// SFF-8024 identifiers managed through CMIS: 0x18 QSFP-DD, 0x19 OSFP, 0x1E QSFP+ with CMIS.
bool IsCmisIdentifier(uint8_t identifier);

/// Decodes identity, firmware version, module monitors, the module's flags and, when present, the
/// lane monitors (page 11h, gated by the page 01h advertisement) and thresholds (page 02h).
/// Needs `pages.lower` and upper page 00h; 01h, 02h and 11h are optional. Errors as
/// DecodeSff8636.
Result<Transceiver> DecodeCmis(const ModulePages& pages);

}  // namespace roceqos
