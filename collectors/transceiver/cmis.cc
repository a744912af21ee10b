#include "collectors/transceiver/cmis.h"

#include <fmt/format.h>

#include <cerrno>
#include <span>

#include "collectors/transceiver/module_fields.h"

namespace roceqos {
namespace {

using module_fields::Up;
using Page = std::span<const uint8_t>;

constexpr size_t kLanesPerBank = 8;
constexpr uint8_t kModuleReady = 3;  // lower page byte 3 bits 3-1: ModuleReady

std::string CmisTypeName(uint8_t identifier) {
  switch (identifier) {  // SFF-8024 Table 4-1
    case 0x18:
      return "QSFP-DD";
    case 0x19:
      return "OSFP";
    default:
      return "QSFP+ (CMIS)";  // 0x1e
  }
}

// One bit per lane (bit 0 = lane 1) in four consecutive flag bytes: high alarm, low alarm,
// high warning, low warning (page 11h bytes 139-142, 143-146, 149-152).
MonitorFlags CmisLaneFlags(Page page11, size_t first_byte, size_t lane) {
  auto bit = [&](size_t byte) { return ((page11[Up(byte)] >> lane) & 1) != 0; };
  return {.high_alarm = bit(first_byte),
          .low_alarm = bit(first_byte + 1),
          .high_warning = bit(first_byte + 2),
          .low_warning = bit(first_byte + 3)};
}

void CmisDecodeIdentity(Page lower, Page page0, Transceiver* t) {
  t->spec = ModuleSpec::kCmis;
  t->identifier = lower[0];  // lower page byte 0: identifier (SFF-8024)
  t->module_type = CmisTypeName(t->identifier);
  // lower page byte 1: CMIS revision, major in bits 7-4, minor in bits 3-0.
  t->spec_revision = fmt::format("CMIS {}.{}", lower[1] >> 4, lower[1] & 0x0f);
  t->flat_memory = (lower[2] & 0x80) != 0;                   // byte 2 bit 7: MemoryModel (1 = flat)
  t->data_ready = ((lower[3] >> 1) & 0x07) == kModuleReady;  // byte 3 bits 3-1: ModuleState
  // lower page bytes 39-40: active firmware major, minor revision.
  t->firmware_version = fmt::format("{}.{}", lower[39], lower[40]);
  t->vendor_name = module_fields::Ascii(page0, Up(129), 16);    // 00h bytes 129-144
  t->part_number = module_fields::Ascii(page0, Up(148), 16);    // 00h bytes 148-163
  t->revision = module_fields::Ascii(page0, Up(164), 2);        // 00h bytes 164-165
  t->serial_number = module_fields::Ascii(page0, Up(166), 16);  // 00h bytes 166-181
}

void DecodeModuleMonitors(Page lower, Transceiver* t) {
  // lower page bytes 14-15: temperature, signed 1/256 °C; bytes 16-17: supply voltage, 100 µV.
  t->temperature_celsius = module_fields::Celsius(lower, 14);
  t->supply_voltage_volts = module_fields::Volts(lower, 16);
  // lower page byte 9: bits 0-3 temperature HA, LA, HW, LW; bits 4-7 Vcc HA, LA, HW, LW.
  auto flags = [](uint8_t nibble) {
    return MonitorFlags{.high_alarm = (nibble & 1) != 0,
                        .low_alarm = (nibble & 2) != 0,
                        .high_warning = (nibble & 4) != 0,
                        .low_warning = (nibble & 8) != 0};
  };
  t->temperature_flags = flags(lower[9] & 0x0f);
  t->supply_voltage_flags = flags(lower[9] >> 4);
}

// Page 01h byte 160 bits 4-3: Tx bias current multiplier (x1, x2, x4).
unsigned BiasMultiplier(Page page1) { return 1u << ((page1[Up(160)] >> 3) & 0x03); }

void DecodeLanes(Page lower, Page page1, Page page11, Transceiver* t) {
  // lower page byte 88 bits 3-0: media lane count of the first application descriptor.
  size_t count = lower[88] & 0x0f;
  if (count == 0 || count > kLanesPerBank) count = kLanesPerBank;
  const uint8_t supported = page1[Up(160)];  // 01h byte 160: bit 0 bias, 1 Tx power, 2 Rx power
  const unsigned multiplier = BiasMultiplier(page1);
  // 01h byte 151 bit 4: Rx power measurement type (1 = average power, 0 = OMA).
  t->rx_power_is_average = (page1[Up(151)] & 0x10) != 0;
  t->lanes.resize(count);
  for (size_t i = 0; i < count; ++i) {
    LaneMonitors& lane = t->lanes[i];
    if (supported & 0x02) lane.tx_power_watts = module_fields::Watts(page11, Up(154) + 2 * i);
    if (supported & 0x01) {
      lane.tx_bias_amperes = module_fields::Amperes(page11, Up(170) + 2 * i, multiplier);
    }
    if (supported & 0x04) lane.rx_power_watts = module_fields::Watts(page11, Up(186) + 2 * i);
    lane.tx_power_flags = CmisLaneFlags(page11, 139, i);  // 11h bytes 139-142
    lane.tx_bias_flags = CmisLaneFlags(page11, 143, i);   // 11h bytes 143-146
    lane.rx_power_flags = CmisLaneFlags(page11, 149, i);  // 11h bytes 149-152
  }
}

ModuleThresholds DecodeThresholds(Page page2, unsigned bias_multiplier) {
  using namespace module_fields;
  ModuleThresholds th;
  // Upper page 02h, each monitor as high alarm, low alarm, high warning, low warning (MSB first).
  th.temperature_celsius = Thresholds(page2, Up(128), Celsius);            // 02h bytes 128-135
  th.supply_voltage_volts = Thresholds(page2, Up(136), Volts);             // 02h bytes 136-143
  th.tx_power_watts = Thresholds(page2, Up(176), Watts);                   // 02h bytes 176-183
  th.tx_bias_amperes = Thresholds(page2, Up(184), [&](Page p, size_t o) {  // 02h bytes 184-191
    return Amperes(p, o, bias_multiplier);
  });
  th.rx_power_watts = Thresholds(page2, Up(192), Watts);  // 02h bytes 192-199
  return th;
}

}  // namespace

bool IsCmisIdentifier(uint8_t identifier) {
  return identifier == 0x18 || identifier == 0x19 || identifier == 0x1e;
}

Result<Transceiver> DecodeCmis(const ModulePages& pages) {
  if (pages.lower.size() != kModuleHalfPage) {
    return MakeError(0, fmt::format("CMIS: lower page is {} bytes, expected {}", pages.lower.size(),
                                    kModuleHalfPage));
  }
  const Page lower = pages.lower;
  if (!IsCmisIdentifier(lower[0])) {
    return MakeError(
        EMEDIUMTYPE,
        fmt::format("CMIS: identifier 0x{:02x} is not QSFP-DD/OSFP/QSFP+ CMIS", lower[0]));
  }
  const Page page0 = pages.Upper(0x00);
  if (page0.empty()) return MakeError(0, "CMIS: upper page 00h missing or short");
  Transceiver t;
  CmisDecodeIdentity(lower, page0, &t);
  DecodeModuleMonitors(lower, &t);
  if (t.flat_memory) return t;  // passive copper: no pages 01h/02h/11h, no lane monitors
  const Page page1 = pages.Upper(0x01);
  if (const Page page11 = pages.Upper(0x11); !page1.empty() && !page11.empty()) {
    DecodeLanes(lower, page1, page11, &t);
  }
  if (const Page page2 = pages.Upper(0x02); !page2.empty()) {
    t.thresholds = DecodeThresholds(page2, page1.empty() ? 1 : BiasMultiplier(page1));
  }
  return t;
}

}  // namespace roceqos
