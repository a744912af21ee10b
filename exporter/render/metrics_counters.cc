// Port counters from ETHTOOL_GSTATS, through the per-generation name mapping.

#include <string>

#include "collectors/ethtool_map.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

constexpr double kMicrosPerSecond = 1e6;

}  // namespace

void RenderEthtoolCounters(const Snapshot& snapshot, Families& out) {
  FamilyBuilder pause_frames(FindMetric("roce_pfc_pause_frames_total"));
  FamilyBuilder pause_duration(FindMetric("roce_pfc_pause_duration_seconds_total"));
  FamilyBuilder pause_transitions(FindMetric("roce_pfc_pause_transitions_total"));
  FamilyBuilder prio_packets(FindMetric("roce_prio_packets_total"));
  FamilyBuilder prio_bytes(FindMetric("roce_prio_bytes_total"));
  FamilyBuilder prio_discards(FindMetric("roce_prio_discards_total"));
  FamilyBuilder tc_discards(FindMetric("roce_tc_discards_total"));
  FamilyBuilder tc_ecn(FindMetric("roce_tc_ecn_marked_packets_total"));
  FamilyBuilder global_pause(FindMetric("roce_global_pause_frames_total"));
  FamilyBuilder global_pause_duration(FindMetric("roce_global_pause_duration_seconds_total"));
  FamilyBuilder storm_events(FindMetric("roce_pause_storm_events_total"));
  FamilyBuilder port_discards(FindMetric("roce_port_discards_total"));
  FamilyBuilder out_of_buffer(FindMetric("roce_port_rx_out_of_buffer_packets_total"));
  FamilyBuilder buffer_threshold(FindMetric("roce_port_rx_buffer_passed_threshold_total"));
  FamilyBuilder set_changes(FindMetric("roce_ethtool_string_set_changes_total"));
  FamilyBuilder raw(FindMetric("roce_ethtool_stat"));

  std::string index_storage;
  for (const DeviceSnapshot& device : snapshot.devices) {
    if (!device.ethtool || !device.device) continue;
    const EthtoolSample& sample = *device.ethtool;
    const std::string_view netdev = device.device->name;
    const std::vector<uint64_t>& values = sample.counters.values;

    if (sample.mapped) {
      for (const MappedCounter& c : *sample.mapped) {
        if (c.source_index >= values.size()) continue;
        const double v = static_cast<double>(values[c.source_index]);
        const std::string_view index = IndexLabel(c.index, index_storage);
        const std::string_view dir = DirectionName(c.direction);
        switch (c.counter) {
          case PortCounter::kPauseFrames:
            pause_frames.Add({netdev, index, dir}, v);
            break;
          case PortCounter::kPauseDurationMicros:
            pause_duration.Add({netdev, index, dir}, v / kMicrosPerSecond);
            break;
          case PortCounter::kPauseTransitions:
            pause_transitions.Add({netdev, index}, v);
            break;
          case PortCounter::kPrioPackets:
            prio_packets.Add({netdev, index, dir}, v);
            break;
          case PortCounter::kPrioBytes:
            prio_bytes.Add({netdev, index, dir}, v);
            break;
          case PortCounter::kPrioDiscards:
            prio_discards.Add({netdev, index}, v);
            break;
          case PortCounter::kTcBufferDiscards:
            tc_discards.Add({netdev, index, "buffer"}, v);
            break;
          case PortCounter::kTcCongestionDiscards:
            tc_discards.Add({netdev, index, "congestion"}, v);
            break;
          case PortCounter::kTcEcnMarked:
            tc_ecn.Add({netdev, index}, v);
            break;
          case PortCounter::kGlobalPauseFrames:
            global_pause.Add({netdev, dir}, v);
            break;
          case PortCounter::kGlobalPauseDurationMicros:
            global_pause_duration.Add({netdev, dir}, v / kMicrosPerSecond);
            break;
          case PortCounter::kPauseStormWarningEvents:
            storm_events.Add({netdev, "warning"}, v);
            break;
          case PortCounter::kPauseStormErrorEvents:
            storm_events.Add({netdev, "error"}, v);
            break;
          case PortCounter::kPortDiscards:
            port_discards.Add({netdev, dir}, v);
            break;
          case PortCounter::kPortOutOfBuffer:
            out_of_buffer.Add({netdev}, v);
            break;
          case PortCounter::kPortBufferPassedThreshold:
            buffer_threshold.Add({netdev}, v);
            break;
        }
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

  for (FamilyBuilder* f :
       {&pause_frames, &pause_duration, &pause_transitions, &prio_packets, &prio_bytes,
        &prio_discards, &tc_discards, &tc_ecn, &global_pause, &global_pause_duration, &storm_events,
        &port_discards, &out_of_buffer, &buffer_threshold, &set_changes, &raw}) {
    f->AppendTo(out);
  }
}

}  // namespace roceqos
