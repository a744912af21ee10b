#pragma once

// Maps mlx5 `ethtool -S` names (reference §3) to the metric catalogue's semantic counters.
// Built once per string-set generation, applied to every sample.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roceqos {

enum class Direction : uint8_t { kNone, kRx, kTx };

enum class PortCounter : uint8_t {
  kPauseFrames,                // rx/tx_prio%d_pause                     (per prio, direction)
  kPauseDurationMicros,        // rx/tx_prio%d_pause_duration (µs)       (per prio, direction)
  kPauseTransitions,           // rx_prio%d_pause_transition             (per prio, rx)
  kPrioPackets,                // rx/tx_prio%d_packets                   (per prio, direction)
  kPrioBytes,                  // rx/tx_prio%d_bytes                     (per prio, direction)
  kPrioDiscards,               // rx_prio%d_discards                     (per prio, rx)
  kTcBufferDiscards,           // rx_prio%d_buf_discard  (per TC despite the name, §3.2)
  kTcCongestionDiscards,       // rx_prio%d_cong_discard (per TC)
  kTcEcnMarked,                // rx_prio%d_marked       (per TC)
  kGlobalPauseFrames,          // rx/tx_global_pause                     (direction)
  kGlobalPauseDurationMicros,  // rx/tx_global_pause_duration       (direction)
  kPauseStormWarningEvents,    // tx_pause_storm_warning_events
  kPauseStormErrorEvents,      // tx_pause_storm_error_events
  kPortDiscards,               // rx/tx_discards_phy                     (direction)
  kPortOutOfBuffer,            // rx_out_of_buffer
  kPortBufferPassedThreshold,  // rx_buffer_passed_thres_phy
};

struct MappedCounter {
  PortCounter counter;
  Direction direction = Direction::kNone;
  int8_t index = -1;          // priority or traffic class 0..7; -1 when not indexed
  uint32_t source_index = 0;  // position in the CounterSet values
};

/// Recognised names, in string-set order. Unknown names are skipped (they can still be exported
/// raw through the opt-in name regex).
std::vector<MappedCounter> MapMlx5EthtoolNames(const std::vector<std::string>& names);

std::string_view PortCounterName(PortCounter counter);  // stable id used in tests and docs

}  // namespace roceqos
