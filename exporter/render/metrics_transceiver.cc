// Transceiver health: what the transceiver poller last read from each module EEPROM
// (exporter/sampling/transceiver_poller.h), attached to the snapshot. Only netdevs of the rendered
// snapshot are shown, so a device that left the selection or vanished has no series even while
// the poller's state still lists it (until its next round).

#include <optional>
#include <string>
#include <string_view>

#include "exporter/core/transceiver_state.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

// Only raised flags are series (value 1): a clear flag has none. Every flag of every monitor at 0
// would be ~80 series per port that are almost always 0 (56 per QSFP28, 104 per 8-lane CMIS
// module): a fifth of a node's series in docs/fleet.md, for a signal alerts read as "== 1" anyway.
void AddFlags(FamilyBuilder& family, std::string_view netdev, std::string_view monitor,
              std::string_view lane, const MonitorFlags& flags) {
  if (flags.high_alarm) family.Add({netdev, monitor, lane, "high_alarm"}, 1);
  if (flags.low_alarm) family.Add({netdev, monitor, lane, "low_alarm"}, 1);
  if (flags.high_warning) family.Add({netdev, monitor, lane, "high_warning"}, 1);
  if (flags.low_warning) family.Add({netdev, monitor, lane, "low_warning"}, 1);
}

void AddThresholds(FamilyBuilder& family, std::string_view netdev, std::string_view monitor,
                   const MonitorThresholds& t) {
  family.Add({netdev, monitor, "high_alarm"}, t.high_alarm);
  family.Add({netdev, monitor, "low_alarm"}, t.low_alarm);
  family.Add({netdev, monitor, "high_warning"}, t.high_warning);
  family.Add({netdev, monitor, "low_warning"}, t.low_warning);
}

struct TransceiverFamilies {
  FamilyBuilder info{FindMetric("roce_transceiver_info")};
  FamilyBuilder temperature{FindMetric("roce_transceiver_temperature_celsius")};
  FamilyBuilder voltage{FindMetric("roce_transceiver_supply_voltage_volts")};
  FamilyBuilder rx_power{FindMetric("roce_transceiver_rx_power_watts")};
  FamilyBuilder tx_power{FindMetric("roce_transceiver_tx_power_watts")};
  FamilyBuilder tx_bias{FindMetric("roce_transceiver_tx_bias_amperes")};
  FamilyBuilder flag{FindMetric("roce_transceiver_flag")};
  FamilyBuilder threshold{FindMetric("roce_transceiver_threshold")};
  FamilyBuilder read_duration{FindMetric("roce_exporter_transceiver_read_duration_seconds")};
  FamilyBuilder access{FindMetric("roce_exporter_transceiver_access_info")};
};

void AddModule(TransceiverFamilies& f, std::string_view netdev, const TransceiverReading& reading,
               bool serial_numbers) {
  const Transceiver& m = reading.module;
  f.info.Add({netdev, m.module_type, ModuleSpecName(m.spec), m.vendor_name, m.part_number,
              m.revision, m.firmware_version.value_or(""), serial_numbers ? m.serial_number : ""},
             1);
  f.read_duration.Add({netdev}, reading.read_seconds);
  f.access.Add({netdev, ModuleAccessMethodName(reading.access.method),
                FormatModulePages(reading.access.unread_pages)},
               1);
  if (m.temperature_celsius) {
    f.temperature.Add({netdev}, *m.temperature_celsius);
    AddFlags(f.flag, netdev, "temperature", "", m.temperature_flags);
  }
  if (m.supply_voltage_volts) {
    f.voltage.Add({netdev}, *m.supply_voltage_volts);
    AddFlags(f.flag, netdev, "supply_voltage", "", m.supply_voltage_flags);
  }
  bool any_rx = false, any_tx = false, any_bias = false;
  std::string lane;
  for (size_t i = 0; i < m.lanes.size(); ++i) {
    const LaneMonitors& l = m.lanes[i];
    lane = std::to_string(i + 1);  // lanes are 1-based in both specs and in ethtool -m
    if (l.rx_power_watts) {
      any_rx = true;
      f.rx_power.Add({netdev, lane}, *l.rx_power_watts);
      AddFlags(f.flag, netdev, "rx_power", lane, l.rx_power_flags);
    }
    if (l.tx_power_watts) {
      any_tx = true;
      f.tx_power.Add({netdev, lane}, *l.tx_power_watts);
      AddFlags(f.flag, netdev, "tx_power", lane, l.tx_power_flags);
    }
    if (l.tx_bias_amperes) {
      any_bias = true;
      f.tx_bias.Add({netdev, lane}, *l.tx_bias_amperes);
      AddFlags(f.flag, netdev, "tx_bias", lane, l.tx_bias_flags);
    }
  }
  if (!m.thresholds) return;  // flat memory: no threshold page
  const ModuleThresholds& t = *m.thresholds;
  if (m.temperature_celsius)
    AddThresholds(f.threshold, netdev, "temperature", t.temperature_celsius);
  if (m.supply_voltage_volts) {
    AddThresholds(f.threshold, netdev, "supply_voltage", t.supply_voltage_volts);
  }
  // Lane thresholds only for monitors the module implements: a threshold without a value to
  // compare is noise.
  if (any_rx) AddThresholds(f.threshold, netdev, "rx_power", t.rx_power_watts);
  if (any_tx) AddThresholds(f.threshold, netdev, "tx_power", t.tx_power_watts);
  if (any_bias) AddThresholds(f.threshold, netdev, "tx_bias", t.tx_bias_amperes);
}

}  // namespace

void RenderTransceivers(const Snapshot& snapshot, MetricSink& out) {
  if (!snapshot.transceivers) return;  // --transceiver.interval=0, or no round finished yet
  const TransceiverState& state = *snapshot.transceivers;
  TransceiverFamilies f;
  for (const DeviceSnapshot& snap : snapshot.devices) {
    if (!snap.device) continue;
    auto found = state.modules.find(snap.device->name);
    if (found == state.modules.end()) continue;
    AddModule(f, snap.device->name, found->second, state.serial_numbers);
  }
  for (FamilyBuilder* family : {&f.info, &f.temperature, &f.voltage, &f.rx_power, &f.tx_power,
                                &f.tx_bias, &f.flag, &f.threshold, &f.read_duration, &f.access}) {
    family->AppendTo(out);
  }

  FamilyBuilder reads(FindMetric("roce_exporter_transceiver_reads_total"));
  reads.Add({}, static_cast<double>(state.reads));
  reads.AppendTo(out);
  FamilyBuilder errors(FindMetric("roce_exporter_transceiver_read_errors_total"));
  for (const auto& [reason, count] : state.errors) errors.Add({reason}, static_cast<double>(count));
  errors.AppendTo(out);
  FamilyBuilder round(FindMetric("roce_exporter_transceiver_round_duration_seconds"));
  round.Add({}, state.last_round_seconds);
  round.AppendTo(out);
  FamilyBuilder denied(FindMetric("roce_exporter_transceiver_permission_denied"));
  denied.Add({}, state.permission_denied ? 1 : 0);
  denied.AppendTo(out);
  FamilyBuilder interval(FindMetric("roce_exporter_transceiver_interval_seconds"));
  interval.Add({}, state.interval_seconds);
  interval.AppendTo(out);
}

}  // namespace roceqos
