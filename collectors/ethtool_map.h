#pragma once

// Maps mlx5 `ethtool -S` names (docs/kernel-interfaces.md §3) to the metric catalogue's semantic
// counters. Built once per string-set generation, applied to every sample.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"

namespace roceqos {

/// The rx_/tx_ of the kernel's name. Set for every mlx5 name (also single-direction ones such as
/// rx_prio%d_discards or tx_pause_storm_*); the exporter decides which families carry the label.
enum class Direction : uint8_t { kNone, kRx, kTx };

enum class PortCounter : uint8_t {
  kPauseFrames,                // rx/tx_prio%d_pause                     (per prio)
  kPauseDurationMicros,        // rx/tx_prio%d_pause_duration (µs)       (per prio)
  kPauseTransitions,           // rx_prio%d_pause_transition             (per prio, rx only)
  kPrioPackets,                // rx/tx_prio%d_packets                   (per prio)
  kPrioBytes,                  // rx/tx_prio%d_bytes                     (per prio)
  kPrioDiscards,               // rx_prio%d_discards                     (per prio, rx only)
  kTcBufferDiscards,           // rx_prio%d_buf_discard  (per TC despite the name, §3.2)
  kTcCongestionDiscards,       // rx_prio%d_cong_discard (per TC)
  kTcEcnMarked,                // rx_prio%d_marked       (per TC)
  kGlobalPauseFrames,          // rx/tx_global_pause
  kGlobalPauseDurationMicros,  // rx/tx_global_pause_duration (µs)
  kPauseStormWarningEvents,    // tx_pause_storm_warning_events
  kPauseStormErrorEvents,      // tx_pause_storm_error_events
  kPortDiscards,               // rx/tx_discards_phy (kernel 4.4: in_discards/out_discards)
  kPortOutOfBuffer,            // rx_out_of_buffer
  kPortBufferPassedThreshold,  // rx_buffer_passed_thres_phy
  kPciSignalIntegrity,         // rx/tx_pci_signal_integrity (PCIe link retrains, docs/pcie.md)
};

struct MappedCounter {
  PortCounter counter;
  Direction direction = Direction::kNone;
  int8_t index = -1;          // priority or traffic class 0..7; -1 when not indexed
  uint32_t source_index = 0;  // position in the CounterSet values

  bool operator==(const MappedCounter&) const = default;
};

/// Recognised names, in string-set order. Matching is exact (`rx_prio0_pause_duration` is never
/// taken for `rx_prio0_pause`; per-ring `rx0_*`/`ch0_*` and the software `rx_ecn_mark` are not
/// port counters). When a (counter, direction, index) occurs twice, the first one wins, so the
/// exporter never emits a duplicate series. Unknown names are skipped (they can still be exported
/// raw through the opt-in name regex). Also recognises the pre-4.10 names `prio%d_{rx,tx}_*` and
/// kernel 4.4's `in_discards`/`out_discards` (docs/ethtool.md lists exactly what maps).
std::vector<MappedCounter> MapMlx5EthtoolNames(const std::vector<std::string>& names);

/// Positions of mlx5's link-health counters in an `ethtool -S` string set (en_stats.c groups
/// 802_3, phy and phy statistical; docs/link.md), found once per string-set generation. They are
/// the fallback for the ethtool netlink figures (collectors/link_stats.h) on kernels and drivers
/// without those, and rx_bits_phy with rx_corrected_bits_phy give the pre-FEC BER.
struct LinkEthtoolNames {
  std::optional<uint32_t> symbol_errors;      // rx_symbol_err_phy (aSymbolErrorDuringCarrier)
  std::optional<uint32_t> pcs_symbol_errors;  // rx_pcs_symbol_err_phy (PPCNT phy_symbol_errors)
  std::optional<uint32_t> fcs_errors;         // rx_crc_errors_phy (aFrameCheckSequenceErrors)
  std::optional<uint32_t> link_down_events;   // link_down_events_phy
  std::optional<uint32_t> corrected_bits;     // rx_corrected_bits_phy (phy_corrected_bits)
  std::optional<uint32_t> received_bits;      // rx_bits_phy (phy_received_bits; newer drivers)
  /// rx_err_lane_<N>_phy (phy_corrected_bits_lane<N>): index N holds lane N's position; lanes are
  /// contiguous from 0 (a gap ends the list).
  std::vector<uint32_t> lane_corrected_bits;

  bool operator==(const LinkEthtoolNames&) const = default;
};

/// Exact names only; when a name repeats, the first position wins.
LinkEthtoolNames MapMlx5LinkNames(const std::vector<std::string>& names);

/// Stable ids used in tests and docs.
inline constexpr EnumName<PortCounter> kPortCounterNames[] = {
    {PortCounter::kPauseFrames, "pause_frames"},
    {PortCounter::kPauseDurationMicros, "pause_duration_micros"},
    {PortCounter::kPauseTransitions, "pause_transitions"},
    {PortCounter::kPrioPackets, "prio_packets"},
    {PortCounter::kPrioBytes, "prio_bytes"},
    {PortCounter::kPrioDiscards, "prio_discards"},
    {PortCounter::kTcBufferDiscards, "tc_buffer_discards"},
    {PortCounter::kTcCongestionDiscards, "tc_congestion_discards"},
    {PortCounter::kTcEcnMarked, "tc_ecn_marked"},
    {PortCounter::kGlobalPauseFrames, "global_pause_frames"},
    {PortCounter::kGlobalPauseDurationMicros, "global_pause_duration_micros"},
    {PortCounter::kPauseStormWarningEvents, "pause_storm_warning_events"},
    {PortCounter::kPauseStormErrorEvents, "pause_storm_error_events"},
    {PortCounter::kPortDiscards, "port_discards"},
    {PortCounter::kPortOutOfBuffer, "port_out_of_buffer"},
    {PortCounter::kPortBufferPassedThreshold, "port_buffer_passed_threshold"},
    {PortCounter::kPciSignalIntegrity, "pci_signal_integrity"},
};
/// The `direction` label value: "" for kNone.
inline constexpr EnumName<Direction> kDirectionNames[] = {
    {Direction::kNone, ""},
    {Direction::kRx, "rx"},
    {Direction::kTx, "tx"},
};

std::string_view PortCounterName(PortCounter counter);
std::string_view DirectionName(Direction direction);

}  // namespace roceqos
