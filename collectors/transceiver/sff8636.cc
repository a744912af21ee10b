#include "collectors/transceiver/sff8636.h"

#include <fmt/format.h>

#include <cerrno>
#include <span>

#include "collectors/transceiver/module_fields.h"

namespace roceqos {
namespace {

using module_fields::Up;
using Page = std::span<const uint8_t>;

constexpr size_t kLanes = 4;

// SFF-8636 lower page byte 1: revision compliance code (Table 6-3).
std::string RevisionName(uint8_t code) {
  switch (code) {
    case 0x01:
      return "SFF-8436 rev 4.8 or earlier";
    case 0x02:
      return "SFF-8436 rev 4.8 or earlier (with SFF-8636 fields)";
    case 0x03:
      return "SFF-8636 rev 1.3 or earlier";
    case 0x04:
      return "SFF-8636 rev 1.4";
    case 0x05:
      return "SFF-8636 rev 1.5";
    case 0x06:
      return "SFF-8636 rev 2.0";
    case 0x07:
      return "SFF-8636 rev 2.5-2.7";
    case 0x08:
      return "SFF-8636 rev 2.8-2.10";
    default:
      return fmt::format("SFF-8636 revision code 0x{:02x}", code);
  }
}

std::string Sff8636TypeName(uint8_t identifier) {
  switch (identifier) {  // SFF-8024 Table 4-1
    case 0x0c:
      return "QSFP";
    case 0x0d:
      return "QSFP+";
    default:
      return "QSFP28";  // 0x11: "QSFP28 or later"
  }
}

// Flags of one monitor from the high (lane 1/3) or low (lane 2/4) nibble of a flag byte:
// bit 3 high alarm, 2 low alarm, 1 high warning, 0 low warning (of the nibble).
MonitorFlags NibbleFlags(uint8_t byte, bool high_nibble) {
  const uint8_t n = high_nibble ? byte >> 4 : byte & 0x0f;
  return {.high_alarm = (n & 0x8) != 0,
          .low_alarm = (n & 0x4) != 0,
          .high_warning = (n & 0x2) != 0,
          .low_warning = (n & 0x1) != 0};
}

// Lane i's flags: two lanes per byte starting at `first` (lanes 1,2 in `first`, 3,4 after it).
MonitorFlags LaneFlags(Page lower, size_t first, size_t lane) {
  return NibbleFlags(lower[first + lane / 2], lane % 2 == 0);
}

void DecodeIdentity(Page lower, Page page0, Transceiver* t) {
  t->spec = ModuleSpec::kSff8636;
  t->identifier = lower[0];  // lower page byte 0: identifier (SFF-8024)
  t->module_type = Sff8636TypeName(t->identifier);
  t->spec_revision = RevisionName(lower[1]);  // lower page byte 1: revision compliance
  // lower page byte 2 bit 2: Flat_mem (1 = upper page 00h only); bit 0: Data_Not_Ready.
  t->flat_memory = (lower[2] & 0x04) != 0;
  t->data_ready = (lower[2] & 0x01) == 0;
  t->vendor_name = module_fields::Ascii(page0, Up(148), 16);    // 00h bytes 148-163
  t->part_number = module_fields::Ascii(page0, Up(168), 16);    // 00h bytes 168-183
  t->revision = module_fields::Ascii(page0, Up(184), 2);        // 00h bytes 184-185
  t->serial_number = module_fields::Ascii(page0, Up(196), 16);  // 00h bytes 196-211
  // 00h byte 220 bit 3: received power measurement type (1 = average power, 0 = OMA).
  t->rx_power_is_average = (page0[Up(220)] & 0x08) != 0;
}

void DecodeMonitors(Page lower, Page page0, Transceiver* t) {
  // lower page bytes 22-23: temperature, signed 1/256 °C; bytes 26-27: Vcc, 100 µV.
  t->temperature_celsius = module_fields::Celsius(lower, 22);
  t->supply_voltage_volts = module_fields::Volts(lower, 26);
  // lower page byte 6 bits 7-4 / byte 7 bits 7-4: temperature / Vcc HA, LA, HW, LW.
  t->temperature_flags = NibbleFlags(lower[6], true);
  t->supply_voltage_flags = NibbleFlags(lower[7], true);
  // 00h byte 220 bit 2: transmitter power measurement supported.
  const bool tx_power = (page0[Up(220)] & 0x04) != 0;
  t->lanes.resize(kLanes);
  for (size_t i = 0; i < kLanes; ++i) {
    LaneMonitors& lane = t->lanes[i];
    lane.rx_power_watts = module_fields::Watts(lower, 34 + 2 * i);     // bytes 34-41, 0.1 µW
    lane.tx_bias_amperes = module_fields::Amperes(lower, 42 + 2 * i);  // bytes 42-49, 2 µA
    if (tx_power) lane.tx_power_watts = module_fields::Watts(lower, 50 + 2 * i);  // bytes 50-57
    lane.rx_power_flags = LaneFlags(lower, 9, i);   // bytes 9-10: Rx power flags
    lane.tx_bias_flags = LaneFlags(lower, 11, i);   // bytes 11-12: Tx bias flags
    lane.tx_power_flags = LaneFlags(lower, 13, i);  // bytes 13-14: Tx power flags
  }
}

ModuleThresholds DecodeThresholds(Page page3) {
  using namespace module_fields;
  ModuleThresholds th;
  // Upper page 03h, each monitor as high alarm, low alarm, high warning, low warning (MSB first).
  th.temperature_celsius = Thresholds(page3, Up(128), Celsius);  // 03h bytes 128-135
  th.supply_voltage_volts = Thresholds(page3, Up(144), Volts);   // 03h bytes 144-151
  th.rx_power_watts = Thresholds(page3, Up(176), Watts);         // 03h bytes 176-183
  th.tx_bias_amperes =                                           // 03h bytes 184-191
      Thresholds(page3, Up(184), [](Page p, size_t o) { return Amperes(p, o); });
  th.tx_power_watts = Thresholds(page3, Up(192), Watts);  // 03h bytes 192-199
  return th;
}

}  // namespace

bool IsSff8636Identifier(uint8_t identifier) {
  return identifier == 0x0c || identifier == 0x0d || identifier == 0x11;
}

Result<Transceiver> DecodeSff8636(const ModulePages& pages) {
  if (pages.lower.size() != kModuleHalfPage) {
    return MakeError(0, fmt::format("SFF-8636: lower page is {} bytes, expected {}",
                                    pages.lower.size(), kModuleHalfPage));
  }
  const Page lower = pages.lower;
  if (!IsSff8636Identifier(lower[0])) {
    return MakeError(
        EMEDIUMTYPE,
        fmt::format("SFF-8636: identifier 0x{:02x} is not QSFP/QSFP+/QSFP28", lower[0]));
  }
  const Page page0 = pages.Upper(0x00);
  if (page0.empty()) return MakeError(0, "SFF-8636: upper page 00h missing or short");
  Transceiver t;
  DecodeIdentity(lower, page0, &t);
  DecodeMonitors(lower, page0, &t);
  if (const Page page3 = pages.Upper(0x03); !t.flat_memory && !page3.empty()) {
    t.thresholds = DecodeThresholds(page3);
  }
  return t;
}

}  // namespace roceqos
