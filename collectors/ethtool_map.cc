#include "collectors/ethtool_map.h"

#include <array>
#include <bitset>
#include <optional>

#include "collectors/dcb.h"

namespace roceqos {
namespace {

// The name patterns are fixed (en_stats.c formats "rx_prio%d_..." etc.), so each name is parsed
// directly: a direction prefix, a one-digit index and a suffix compared whole. No substring or
// regex matching, hence no `rx_prio0_pause` hit inside `rx_prio0_pause_duration`.

struct IndexedSuffix {
  std::string_view suffix;
  PortCounter counter;
  bool rx;  // the driver emits the rx_ form
  bool tx;  // the driver emits the tx_ form
};

// "rx/tx_prio%d_<suffix>": en_stats.c pport_per_prio_traffic_stats_desc (bytes, packets,
// discards), pport_per_prio_pfc_stats_desc (pause, pause_duration, pause_transition) and
// pport_per_tc_prio_stats_desc / pport_per_tc_congest_prio_stats_desc (buf_discard, cong_discard,
// marked; indexed by traffic class although the name says prio, docs/kernel-interfaces.md §3.2).
constexpr std::array kPrioSuffixes = {
    IndexedSuffix{"pause", PortCounter::kPauseFrames, true, true},
    IndexedSuffix{"pause_duration", PortCounter::kPauseDurationMicros, true, true},
    IndexedSuffix{"pause_transition", PortCounter::kPauseTransitions, true, false},
    IndexedSuffix{"bytes", PortCounter::kPrioBytes, true, true},
    IndexedSuffix{"packets", PortCounter::kPrioPackets, true, true},
    IndexedSuffix{"discards", PortCounter::kPrioDiscards, true, false},
    IndexedSuffix{"buf_discard", PortCounter::kTcBufferDiscards, true, false},
    IndexedSuffix{"cong_discard", PortCounter::kTcCongestionDiscards, true, false},
    IndexedSuffix{"marked", PortCounter::kTcEcnMarked, true, false},
};

// "prio%d_rx/tx_<suffix>": the same per-priority PPCNT group before the stats rework of ~4.10
// (en_ethtool.c sprintf("prio%d_%s") over pport_per_prio_{traffic,pfc}_stats_desc).
constexpr std::array kLegacyPrioSuffixes = {
    IndexedSuffix{"octets", PortCounter::kPrioBytes, true, true},
    IndexedSuffix{"frames", PortCounter::kPrioPackets, true, true},
    IndexedSuffix{"pause", PortCounter::kPauseFrames, true, true},
    IndexedSuffix{"pause_duration", PortCounter::kPauseDurationMicros, true, true},
    IndexedSuffix{"pause_transition", PortCounter::kPauseTransitions, true, false},
};

struct ExactName {
  std::string_view name;
  PortCounter counter;
  Direction direction;
};

constexpr std::array kExactNames = {
    // pport_per_prio_pfc_stats_desc with "%s" = "global"; present only while 802.3x pause is on.
    ExactName{"rx_global_pause", PortCounter::kGlobalPauseFrames, Direction::kRx},
    ExactName{"tx_global_pause", PortCounter::kGlobalPauseFrames, Direction::kTx},
    ExactName{"rx_global_pause_duration", PortCounter::kGlobalPauseDurationMicros, Direction::kRx},
    ExactName{"tx_global_pause_duration", PortCounter::kGlobalPauseDurationMicros, Direction::kTx},
    // pport_pfc_stall_stats_desc (device_stall_{minor,critical}_watermark_cnt).
    ExactName{"tx_pause_storm_warning_events", PortCounter::kPauseStormWarningEvents,
              Direction::kTx},
    ExactName{"tx_pause_storm_error_events", PortCounter::kPauseStormErrorEvents, Direction::kTx},
    // RFC 2863 group if_in_discards / if_out_discards; kernel 4.4 named them in_/out_discards.
    ExactName{"rx_discards_phy", PortCounter::kPortDiscards, Direction::kRx},
    ExactName{"tx_discards_phy", PortCounter::kPortDiscards, Direction::kTx},
    ExactName{"in_discards", PortCounter::kPortDiscards, Direction::kRx},
    ExactName{"out_discards", PortCounter::kPortDiscards, Direction::kTx},
    // qcnt group: Q-counter out_of_buffer of the Ethernet RQs (not RoCE's).
    ExactName{"rx_out_of_buffer", PortCounter::kPortOutOfBuffer, Direction::kRx},
    // eth_ext group: rx_buffer_almost_full.
    ExactName{"rx_buffer_passed_thres_phy", PortCounter::kPortBufferPassedThreshold,
              Direction::kRx},
    // pcie_perf_stats_desc (MPCNT PCIe performance group, read with the port counters):
    // rx_/tx_pci_signal_integrity are the link's transitions to Recovery that this end (rx:
    // framing, DLLP/TLP CRC errors) or the other end (tx: TS/EIEOS received) started.
    ExactName{"rx_pci_signal_integrity", PortCounter::kPciSignalIntegrity, Direction::kRx},
    ExactName{"tx_pci_signal_integrity", PortCounter::kPciSignalIntegrity, Direction::kTx},
};

// mlx5 spells priorities (NUM_PPORT_PRIO) and traffic classes alike as "prio<d>".
static_assert(kNumPriorities == kNumTcs);

// Consumes "rx_"/"tx_" at the front of `rest`.
std::optional<Direction> TakeDirection(std::string_view& rest) {
  Direction direction;
  if (rest.starts_with("rx_")) {
    direction = Direction::kRx;
  } else if (rest.starts_with("tx_")) {
    direction = Direction::kTx;
  } else {
    return std::nullopt;
  }
  rest.remove_prefix(3);
  return direction;
}

// Consumes "prio<d>_" with a single digit 0..7 ("prio10_" or "prio8_" are not priorities).
std::optional<int8_t> TakePrio(std::string_view& rest) {
  constexpr std::string_view kPrio = "prio";
  if (rest.size() < kPrio.size() + 2 || !rest.starts_with(kPrio)) return std::nullopt;
  const char digit = rest[kPrio.size()];
  if (digit < '0' || digit >= '0' + kNumPriorities || rest[kPrio.size() + 1] != '_') {
    return std::nullopt;
  }
  rest.remove_prefix(kPrio.size() + 2);
  return static_cast<int8_t>(digit - '0');
}

template <size_t N>
std::optional<PortCounter> FindSuffix(const std::array<IndexedSuffix, N>& table,
                                      std::string_view suffix, Direction direction) {
  for (const IndexedSuffix& entry : table) {
    if (entry.suffix != suffix) continue;
    const bool emitted = direction == Direction::kRx ? entry.rx : entry.tx;
    if (!emitted) return std::nullopt;
    return entry.counter;
  }
  return std::nullopt;
}

std::optional<MappedCounter> MapName(std::string_view name) {
  for (const ExactName& entry : kExactNames) {
    if (entry.name == name) return MappedCounter{entry.counter, entry.direction, -1, 0};
  }
  std::string_view rest = name;
  if (const auto direction = TakeDirection(rest)) {  // rx_prio3_pause
    const auto prio = TakePrio(rest);
    if (!prio) return std::nullopt;
    const auto counter = FindSuffix(kPrioSuffixes, rest, *direction);
    if (!counter) return std::nullopt;
    return MappedCounter{*counter, *direction, *prio, 0};
  }
  if (const auto prio = TakePrio(rest)) {  // prio3_rx_pause (pre-4.10)
    const auto direction = TakeDirection(rest);
    if (!direction) return std::nullopt;
    const auto counter = FindSuffix(kLegacyPrioSuffixes, rest, *direction);
    if (!counter) return std::nullopt;
    return MappedCounter{*counter, *direction, *prio, 0};
  }
  return std::nullopt;
}

constexpr size_t kCounterKinds = static_cast<size_t>(PortCounter::kPciSignalIntegrity) + 1;
constexpr size_t kDirections = 3;
constexpr size_t kIndexSlots = kNumPriorities + 1;  // -1 (not indexed) and 0..7

size_t SeriesKey(const MappedCounter& mapped) {
  return (static_cast<size_t>(mapped.counter) * kDirections +
          static_cast<size_t>(mapped.direction)) *
             kIndexSlots +
         static_cast<size_t>(mapped.index + 1);
}

}  // namespace

std::vector<MappedCounter> MapMlx5EthtoolNames(const std::vector<std::string>& names) {
  std::vector<MappedCounter> mapped;
  std::bitset<kCounterKinds * kDirections * kIndexSlots> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    auto counter = MapName(names[i]);
    if (!counter) continue;
    const size_t key = SeriesKey(*counter);
    if (seen.test(key)) continue;
    seen.set(key);
    counter->source_index = static_cast<uint32_t>(i);
    mapped.push_back(*counter);
  }
  return mapped;
}

namespace {

// The kernel's ETHTOOL_MAX_LANES (include/linux/ethtool.h, not UAPI): the most lanes a port has.
constexpr size_t kMaxLanes = 8;

// Consumes "rx_err_lane_<N>_phy" (en_stats.c pport_phy_statistical_err_lanes_stats_desc, lanes
// 0..3 there; up to 7 accepted for 8-lane ports).
std::optional<size_t> LaneOf(std::string_view name) {
  constexpr std::string_view kPrefix = "rx_err_lane_";
  constexpr std::string_view kSuffix = "_phy";
  if (name.size() != kPrefix.size() + 1 + kSuffix.size()) return std::nullopt;
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return std::nullopt;
  const char digit = name[kPrefix.size()];
  if (digit < '0' || digit > '7') return std::nullopt;
  return static_cast<size_t>(digit - '0');
}

void SetOnce(std::optional<uint32_t>& slot, size_t position) {
  if (!slot) slot = static_cast<uint32_t>(position);
}

}  // namespace

LinkEthtoolNames MapMlx5LinkNames(const std::vector<std::string>& names) {
  LinkEthtoolNames out;
  struct Exact {
    std::string_view name;
    std::optional<uint32_t> LinkEthtoolNames::*slot;
  };
  static constexpr Exact kExact[] = {
      {"rx_symbol_err_phy", &LinkEthtoolNames::symbol_errors},
      {"rx_pcs_symbol_err_phy", &LinkEthtoolNames::pcs_symbol_errors},
      {"rx_crc_errors_phy", &LinkEthtoolNames::fcs_errors},
      {"link_down_events_phy", &LinkEthtoolNames::link_down_events},
      {"rx_corrected_bits_phy", &LinkEthtoolNames::corrected_bits},
      {"rx_bits_phy", &LinkEthtoolNames::received_bits},
  };
  std::array<std::optional<uint32_t>, kMaxLanes> lanes{};
  for (size_t i = 0; i < names.size(); ++i) {
    for (const Exact& e : kExact) {
      if (names[i] == e.name) SetOnce(out.*(e.slot), i);
    }
    if (auto lane = LaneOf(names[i])) SetOnce(lanes[*lane], i);
  }
  for (const std::optional<uint32_t>& lane : lanes) {
    if (!lane) break;
    out.lane_corrected_bits.push_back(*lane);
  }
  return out;
}

std::string_view PortCounterName(PortCounter counter) { return NameOf(kPortCounterNames, counter); }

std::string_view DirectionName(Direction direction) {
  return NameOf(kDirectionNames, direction, "");
}

}  // namespace roceqos
