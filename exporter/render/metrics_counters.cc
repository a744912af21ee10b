// Port counters from ETHTOOL_GSTATS, through the per-generation name mapping.

#include <string>

#include "collectors/ethtool_map.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

constexpr double kMicrosPerSecond = 1e6;

// The families of the ethtool port counters, in exposition order.
struct CounterFamilies {
  FamilyBuilder pause_frames{FindMetric("roce_pfc_pause_frames_total")};
  FamilyBuilder pause_duration{FindMetric("roce_pfc_pause_duration_seconds_total")};
  FamilyBuilder pause_transitions{FindMetric("roce_pfc_pause_transitions_total")};
  FamilyBuilder prio_packets{FindMetric("roce_prio_packets_total")};
  FamilyBuilder prio_bytes{FindMetric("roce_prio_bytes_total")};
  FamilyBuilder prio_discards{FindMetric("roce_prio_discards_total")};
  FamilyBuilder tc_discards{FindMetric("roce_tc_discards_total")};
  FamilyBuilder tc_ecn{FindMetric("roce_tc_ecn_marked_packets_total")};
  FamilyBuilder global_pause{FindMetric("roce_global_pause_frames_total")};
  FamilyBuilder global_pause_duration{FindMetric("roce_global_pause_duration_seconds_total")};
  FamilyBuilder storm_events{FindMetric("roce_pause_storm_events_total")};
  FamilyBuilder port_discards{FindMetric("roce_port_discards_total")};
  FamilyBuilder out_of_buffer{FindMetric("roce_port_rx_out_of_buffer_packets_total")};
  FamilyBuilder buffer_threshold{FindMetric("roce_port_rx_buffer_passed_threshold_total")};
  FamilyBuilder pci_signal_integrity{FindMetric("roce_pcie_signal_integrity_errors_total")};
  FamilyBuilder set_changes{FindMetric("roce_ethtool_string_set_changes_total")};
  FamilyBuilder raw{FindMetric("roce_ethtool_stat")};

  // One mapped counter: the family and labels its PortCounter stands for.
  void AddMapped(std::string_view netdev, PortCounter counter, std::string_view index,
                 std::string_view dir, double v) {
    switch (counter) {
      case PortCounter::kPauseFrames:
        return pause_frames.Add({netdev, index, dir}, v);
      case PortCounter::kPauseDurationMicros:
        return pause_duration.Add({netdev, index, dir}, v / kMicrosPerSecond);
      case PortCounter::kPauseTransitions:
        return pause_transitions.Add({netdev, index}, v);
      case PortCounter::kPrioPackets:
        return prio_packets.Add({netdev, index, dir}, v);
      case PortCounter::kPrioBytes:
        return prio_bytes.Add({netdev, index, dir}, v);
      case PortCounter::kPrioDiscards:
        return prio_discards.Add({netdev, index}, v);
      case PortCounter::kTcBufferDiscards:
        return tc_discards.Add({netdev, index, "buffer"}, v);
      case PortCounter::kTcCongestionDiscards:
        return tc_discards.Add({netdev, index, "congestion"}, v);
      case PortCounter::kTcEcnMarked:
        return tc_ecn.Add({netdev, index}, v);
      case PortCounter::kGlobalPauseFrames:
        return global_pause.Add({netdev, dir}, v);
      case PortCounter::kGlobalPauseDurationMicros:
        return global_pause_duration.Add({netdev, dir}, v / kMicrosPerSecond);
      case PortCounter::kPauseStormWarningEvents:
        return storm_events.Add({netdev, "warning"}, v);
      case PortCounter::kPauseStormErrorEvents:
        return storm_events.Add({netdev, "error"}, v);
      case PortCounter::kPortDiscards:
        return port_discards.Add({netdev, dir}, v);
      case PortCounter::kPortOutOfBuffer:
        return out_of_buffer.Add({netdev}, v);
      case PortCounter::kPortBufferPassedThreshold:
        return buffer_threshold.Add({netdev}, v);
      case PortCounter::kPciSignalIntegrity:
        return pci_signal_integrity.Add({netdev, dir}, v);
    }
  }

  void AddDevice(std::string_view netdev, const EthtoolSample& sample, std::string& storage) {
    const std::vector<uint64_t>& values = sample.counters.values;
    if (sample.mapped) {
      for (const MappedCounter& c : *sample.mapped) {
        if (c.source_index >= values.size()) continue;
        AddMapped(netdev, c.counter, IndexLabel(c.index, storage), DirectionName(c.direction),
                  static_cast<double>(values[c.source_index]));
      }
    }
    set_changes.Add({netdev}, static_cast<double>(sample.string_set_changes));
    if (sample.raw_indices && sample.counters.names) {
      const std::vector<std::string>& names = *sample.counters.names;
      for (uint32_t i : *sample.raw_indices) {
        if (i < values.size() && i < names.size()) {
          raw.Add({netdev, names[i]}, static_cast<double>(values[i]));
        }
      }
    }
  }

  void AppendTo(MetricSink& out) {
    for (FamilyBuilder* f : {&pause_frames, &pause_duration, &pause_transitions, &prio_packets,
                             &prio_bytes, &prio_discards, &tc_discards, &tc_ecn, &global_pause,
                             &global_pause_duration, &storm_events, &port_discards, &out_of_buffer,
                             &buffer_threshold, &pci_signal_integrity, &set_changes, &raw}) {
      f->AppendTo(out);
    }
  }
};

}  // namespace

void RenderEthtoolCounters(const Snapshot& snapshot, MetricSink& out) {
  CounterFamilies families;
  std::string index_storage;
  for (const DeviceSnapshot& device : snapshot.devices) {
    if (!device.ethtool || !device.device) continue;
    families.AddDevice(device.device->name, *device.ethtool, index_storage);
  }
  families.AppendTo(out);
}

}  // namespace roceqos
