#pragma once

// Plain value types of a pluggable module (QSFP28/QSFP56 SFF-8636, QSFP-DD/OSFP CMIS): what the
// module EEPROM collector returns and the decoders (sff8636.h, cmis.h) produce. Units are base
// units (°C for temperature as the specs define it, V, W, A).

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace roceqos {

/// Size of one half page of module memory: the lower page (bytes 0-127) or one upper page
/// (bytes 128-255 of page N).
inline constexpr size_t kModuleHalfPage = 128;

/// The raw memory read from one module, half page by half page. `lower` is bytes 0-127; `upper`
/// maps a page number to bytes 128-255 of that page (bank 0). Decoders need `lower` and page 00h;
/// the other pages are optional (flat-memory modules have none).
struct ModulePages {
  std::vector<uint8_t> lower;
  std::map<uint8_t, std::vector<uint8_t>> upper;

  /// The upper page `page` if it was read and is a full half page, else an empty span.
  std::span<const uint8_t> Upper(uint8_t page) const {
    auto found = upper.find(page);
    if (found == upper.end() || found->second.size() != kModuleHalfPage) return {};
    return found->second;
  }
};

enum class ModuleSpec : uint8_t { kSff8636, kCmis };

/// The module's own threshold-crossing flags of one monitor (latched by the module).
struct MonitorFlags {
  bool high_alarm = false;
  bool low_alarm = false;
  bool high_warning = false;
  bool low_warning = false;

  bool Any() const { return high_alarm || low_alarm || high_warning || low_warning; }
  bool operator==(const MonitorFlags&) const = default;
};

/// The module's own thresholds of one monitor, in the monitor's unit.
struct MonitorThresholds {
  double high_alarm = 0;
  double low_alarm = 0;
  double high_warning = 0;
  double low_warning = 0;

  bool operator==(const MonitorThresholds&) const = default;
};

/// One media lane (SFF-8636 "channel"). A monitor the module does not implement is nullopt.
struct LaneMonitors {
  std::optional<double> rx_power_watts;   // received optical power (average or OMA, see below)
  std::optional<double> tx_power_watts;   // transmitted optical power
  std::optional<double> tx_bias_amperes;  // laser bias current
  MonitorFlags rx_power_flags;
  MonitorFlags tx_power_flags;
  MonitorFlags tx_bias_flags;

  bool operator==(const LaneMonitors&) const = default;
};

struct ModuleThresholds {
  MonitorThresholds temperature_celsius;
  MonitorThresholds supply_voltage_volts;
  MonitorThresholds rx_power_watts;
  MonitorThresholds tx_power_watts;
  MonitorThresholds tx_bias_amperes;

  bool operator==(const ModuleThresholds&) const = default;
};

/// Everything decoded from one module. Strings are the ASCII fields with trailing spaces and NULs
/// removed (non-printable bytes become '?', so a corrupt EEPROM cannot inject label garbage).
struct Transceiver {
  ModuleSpec spec = ModuleSpec::kSff8636;
  uint8_t identifier = 0;     // SFF-8024 identifier (byte 0)
  std::string module_type;    // "QSFP28", "QSFP+", "QSFP", "QSFP-DD", "OSFP", "QSFP+ (CMIS)"
  std::string spec_revision;  // "SFF-8636 rev 2.10a" (byte 1 code), "CMIS 5.0"
  std::string vendor_name;
  std::string part_number;
  std::string serial_number;
  std::string revision;                         // vendor revision
  std::optional<std::string> firmware_version;  // CMIS active firmware "major.minor"
  bool flat_memory = false;                     // no upper pages beyond 00h
  bool data_ready = true;           // SFF-8636 Data_Not_Ready clear; CMIS module state ModuleReady
  bool rx_power_is_average = true;  // false: the module reports OMA

  std::optional<double> temperature_celsius;
  std::optional<double> supply_voltage_volts;
  MonitorFlags temperature_flags;
  MonitorFlags supply_voltage_flags;
  std::vector<LaneMonitors> lanes;
  std::optional<ModuleThresholds> thresholds;  // absent on flat-memory modules

  bool operator==(const Transceiver&) const = default;
};

}  // namespace roceqos
