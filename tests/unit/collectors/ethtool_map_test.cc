#include "collectors/ethtool_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tests/unit/support/ethtool_capture.h"

namespace roceqos {
namespace {

using ::roceqos::testing::CaptureBody;
using ::roceqos::testing::EthtoolBlock;
using ::roceqos::testing::Names;
using ::roceqos::testing::ParseEthtoolStats;
using ::roceqos::testing::ReadCapture;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

constexpr auto kRx = Direction::kRx;
constexpr auto kTx = Direction::kTx;

// One mapped name, spelled out so failures name the kernel counter.
struct Row {
  std::string name;
  PortCounter counter;
  Direction direction;
  int index;
  uint64_t value;

  bool operator==(const Row&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Row& row) {
  return out << row.name << " -> " << PortCounterName(row.counter) << "/"
             << DirectionName(row.direction) << "/" << row.index << " = " << row.value;
}

std::vector<Row> MapBlock(const EthtoolBlock& block) {
  std::vector<Row> rows;
  for (const MappedCounter& mapped : MapMlx5EthtoolNames(Names(block))) {
    const auto& stat = block.at(mapped.source_index);
    rows.push_back({stat.name, mapped.counter, mapped.direction, mapped.index, stat.value});
  }
  return rows;
}

std::vector<EthtoolBlock> CaptureBlocks(const char* prefix) {
  const std::string text = ReadCapture(prefix);
  EXPECT_FALSE(text.empty()) << "capture " << prefix << " not found in " << ROCEQOS_CAPTURES_DIR;
  return ParseEthtoolStats(CaptureBody(text));
}

std::optional<uint64_t> ValueOf(const EthtoolBlock& block, const std::string& name) {
  for (const auto& stat : block) {
    if (stat.name == name) return stat.value;
  }
  return std::nullopt;
}

// Capture 24: full `ethtool -S` of a ConnectX-4 Lx, upstream kernel 4.15. Global pause on, PFC off:
// per-priority traffic counters for all 8 priorities, no per-priority pause, no storm counters.
TEST(MapMlx5EthtoolNames, Capture24FullConnectX4LxKernel415) {
  const auto blocks = CaptureBlocks("24_");
  ASSERT_EQ(blocks.size(), 1u);
  const EthtoolBlock& stats = blocks[0];
  ASSERT_EQ(stats.size(), 751u);  // the capture's header says 751 counter lines

  std::vector<Row> expected = {
      {"rx_out_of_buffer", PortCounter::kPortOutOfBuffer, kRx, -1, 0},
      {"rx_discards_phy", PortCounter::kPortDiscards, kRx, -1, 0},
      {"tx_discards_phy", PortCounter::kPortDiscards, kTx, -1, 0},
      {"rx_buffer_passed_thres_phy", PortCounter::kPortBufferPassedThreshold, kRx, -1, 0},
      {"rx_pci_signal_integrity", PortCounter::kPciSignalIntegrity, kRx, -1, 0},
      {"tx_pci_signal_integrity", PortCounter::kPciSignalIntegrity, kTx, -1, 34},
      {"rx_prio0_bytes", PortCounter::kPrioBytes, kRx, 0, 2202570777997},
      {"rx_prio0_packets", PortCounter::kPrioPackets, kRx, 0, 845715962},
      {"tx_prio0_bytes", PortCounter::kPrioBytes, kTx, 0, 2662454044895},
      {"tx_prio0_packets", PortCounter::kPrioPackets, kTx, 0, 896117891},
  };
  for (int prio = 1; prio < 8; ++prio) {  // all zero in this capture
    const std::string p = std::to_string(prio);
    expected.push_back({"rx_prio" + p + "_bytes", PortCounter::kPrioBytes, kRx, prio, 0});
    expected.push_back({"rx_prio" + p + "_packets", PortCounter::kPrioPackets, kRx, prio, 0});
    expected.push_back({"tx_prio" + p + "_bytes", PortCounter::kPrioBytes, kTx, prio, 0});
    expected.push_back({"tx_prio" + p + "_packets", PortCounter::kPrioPackets, kTx, prio, 0});
  }
  expected.push_back({"rx_global_pause", PortCounter::kGlobalPauseFrames, kRx, -1, 0});
  expected.push_back(
      {"rx_global_pause_duration", PortCounter::kGlobalPauseDurationMicros, kRx, -1, 0});
  expected.push_back({"tx_global_pause", PortCounter::kGlobalPauseFrames, kTx, -1, 0});
  expected.push_back(
      {"tx_global_pause_duration", PortCounter::kGlobalPauseDurationMicros, kTx, -1, 0});
  // Not mapped: rx_global_pause_transition (no catalogue family), rx/tx_pause_ctrl_phy (802.3x
  // MAC control frames), sw rx_packets/rx_bytes, the 16 rings' rxN_*/txN_*.
  EXPECT_THAT(MapBlock(stats), ElementsAreArray(expected));
}

// Capture 16: 100G mlx5, MOFED 5.x, one channel. prio0 traffic and discards, storm counters, and
// the per-TC buffer/congestion/ECN counters at the very end after the per-channel counters.
TEST(MapMlx5EthtoolNames, Capture16MofedPerTcCountersAfterChannels) {
  const auto blocks = CaptureBlocks("16_");
  ASSERT_EQ(blocks.size(), 1u);
  const EthtoolBlock& stats = blocks[0];

  const std::vector<Row> expected = {
      {"rx_out_of_buffer", PortCounter::kPortOutOfBuffer, kRx, -1, 0},
      {"rx_discards_phy", PortCounter::kPortDiscards, kRx, -1, 0},
      {"tx_discards_phy", PortCounter::kPortDiscards, kTx, -1, 0},
      {"rx_buffer_passed_thres_phy", PortCounter::kPortBufferPassedThreshold, kRx, -1, 0},
      {"rx_pci_signal_integrity", PortCounter::kPciSignalIntegrity, kRx, -1, 0},
      {"tx_pci_signal_integrity", PortCounter::kPciSignalIntegrity, kTx, -1, 2},
      {"rx_prio0_bytes", PortCounter::kPrioBytes, kRx, 0, 2027206797},
      {"rx_prio0_packets", PortCounter::kPrioPackets, kRx, 0, 15005729},
      {"rx_prio0_discards", PortCounter::kPrioDiscards, kRx, 0, 0},
      {"tx_prio0_bytes", PortCounter::kPrioBytes, kTx, 0, 865069260},
      {"tx_prio0_packets", PortCounter::kPrioPackets, kTx, 0, 7222593},
      {"tx_pause_storm_warning_events", PortCounter::kPauseStormWarningEvents, kTx, -1, 0},
      {"tx_pause_storm_error_events", PortCounter::kPauseStormErrorEvents, kTx, -1, 0},
      {"rx_prio0_buf_discard", PortCounter::kTcBufferDiscards, kRx, 0, 0},
      {"rx_prio0_cong_discard", PortCounter::kTcCongestionDiscards, kRx, 0, 0},
      {"rx_prio0_marked", PortCounter::kTcEcnMarked, kRx, 0, 0},
  };
  EXPECT_THAT(MapBlock(stats), ElementsAreArray(expected));

  // The per-TC triple is the last three entries of the set, after ch0_*/rx0_*/tx0_*.
  const auto mapped = MapMlx5EthtoolNames(Names(stats));
  ASSERT_GE(mapped.size(), 3u);
  EXPECT_EQ(mapped[mapped.size() - 1].source_index, stats.size() - 1);
  EXPECT_EQ(mapped[mapped.size() - 3].source_index, stats.size() - 3);
  for (const char* present : {"rx_ecn_mark", "rx0_ecn_mark", "rx_xsk_ecn_mark", "ch0_events",
                              "rx0_packets", "rx_pause_ctrl_phy", "tx_pause_ctrl_phy"}) {
    EXPECT_TRUE(ValueOf(stats, present).has_value()) << present << " should be in capture 16";
  }
}

// Capture 15: three grep outputs of a ConnectX-4 Lx (MOFED): discards, pause/PCI, ring packets.
TEST(MapMlx5EthtoolNames, Capture15GrepOutputsWithGlobalPause) {
  const auto blocks = CaptureBlocks("15_");
  ASSERT_EQ(blocks.size(), 3u);

  std::vector<Row> discards = {
      {"rx_out_of_buffer", PortCounter::kPortOutOfBuffer, kRx, -1, 0},
      {"rx_discards_phy", PortCounter::kPortDiscards, kRx, -1, 0},
      {"tx_discards_phy", PortCounter::kPortDiscards, kTx, -1, 0},
      {"rx_buffer_passed_thres_phy", PortCounter::kPortBufferPassedThreshold, kRx, -1, 0},
  };
  for (int prio = 0; prio < 8; ++prio) {
    discards.push_back(
        {"rx_prio" + std::to_string(prio) + "_discards", PortCounter::kPrioDiscards, kRx, prio, 0});
  }
  EXPECT_THAT(MapBlock(blocks[0]), ElementsAreArray(discards));

  // PFC off, 802.3x pause on: real non-zero global pause, and rx/tx_pause_ctrl_phy (same frames,
  // MAC-control view) stay unmapped so they are not counted twice.
  // outbound_pci_stalled_rd/_wr (a percentage of the last second) and their _events stay unmapped.
  const std::vector<Row> pause = {
      {"rx_pci_signal_integrity", PortCounter::kPciSignalIntegrity, kRx, -1, 0},
      {"tx_pci_signal_integrity", PortCounter::kPciSignalIntegrity, kTx, -1, 3},
      {"rx_global_pause", PortCounter::kGlobalPauseFrames, kRx, -1, 0},
      {"rx_global_pause_duration", PortCounter::kGlobalPauseDurationMicros, kRx, -1, 0},
      {"tx_global_pause", PortCounter::kGlobalPauseFrames, kTx, -1, 1266552},
      {"tx_global_pause_duration", PortCounter::kGlobalPauseDurationMicros, kTx, -1, 555665182},
      {"tx_pause_storm_warning_events", PortCounter::kPauseStormWarningEvents, kTx, -1, 0},
      {"tx_pause_storm_error_events", PortCounter::kPauseStormErrorEvents, kTx, -1, 0},
  };
  EXPECT_THAT(MapBlock(blocks[1]), ElementsAreArray(pause));
  EXPECT_EQ(ValueOf(blocks[1], "tx_pause_ctrl_phy"), 1266552u);

  // rx_packets, rx_packets_phy and 63 rings' rxN_packets: none is a per-priority counter.
  ASSERT_EQ(blocks[2].size(), 65u);
  EXPECT_THAT(MapBlock(blocks[2]), IsEmpty());
}

// Capture 23: `ethtool -S | grep prio` before and after a benchmark (the second one truncated).
TEST(MapMlx5EthtoolNames, Capture23PrioTrafficBeforeAfter) {
  const auto blocks = CaptureBlocks("23_");
  ASSERT_EQ(blocks.size(), 2u);
  const auto before = MapBlock(blocks[0]);
  ASSERT_EQ(before.size(), 32u);  // rx/tx bytes/packets for prio 0..7, nothing else
  for (const Row& row : before) {
    EXPECT_TRUE(row.counter == PortCounter::kPrioBytes || row.counter == PortCounter::kPrioPackets)
        << row;
  }
  EXPECT_EQ(before[0], (Row{"rx_prio0_bytes", PortCounter::kPrioBytes, kRx, 0, 88034564921216}));
  EXPECT_EQ(before[1], (Row{"rx_prio0_packets", PortCounter::kPrioPackets, kRx, 0, 419873392068}));
  EXPECT_EQ(before[2], (Row{"tx_prio0_bytes", PortCounter::kPrioBytes, kTx, 0, 13906677385186}));
  EXPECT_EQ(before[3], (Row{"tx_prio0_packets", PortCounter::kPrioPackets, kTx, 0, 40177770079}));
  EXPECT_EQ(before[31], (Row{"tx_prio7_packets", PortCounter::kPrioPackets, kTx, 7, 0}));

  // The deltas the capture's header quotes: rx_prio0_bytes +136,571,931,490, packets +126,736,411.
  const auto after = MapBlock(blocks[1]);
  ASSERT_EQ(after.size(), 19u);  // truncated after tx_prio4_bytes
  EXPECT_EQ(after[0].value - before[0].value, 136571931490u);
  EXPECT_EQ(after[1].value - before[1].value, 126736411u);
}

// Capture 25: kernel 4.4 names. Only the RFC 2863 in_discards/out_discards map (the same PPCNT
// if_in/out_discards counters later named rx/tx_discards_phy); the rest has no equivalent family.
TEST(MapMlx5EthtoolNames, Capture25Kernel44LegacyNames) {
  const auto blocks = CaptureBlocks("25_");
  ASSERT_EQ(blocks.size(), 1u);
  const std::vector<Row> expected = {
      {"in_discards", PortCounter::kPortDiscards, kRx, -1, 0},
      {"out_discards", PortCounter::kPortDiscards, kTx, -1, 0},
  };
  EXPECT_THAT(MapBlock(blocks[0]), ElementsAreArray(expected));
  EXPECT_TRUE(ValueOf(blocks[0], "pause_ctrl_rx").has_value());
}

// No real capture has PFC enabled, so the per-priority pause names are built as mlx5 emits them
// (docs/kernel-interfaces.md §3.1): each enabled priority's five, then the global five, then the
// storm pair.
TEST(MapMlx5EthtoolNames, PerPriorityPauseNamesAreExact) {
  const std::vector<std::string> names = {
      "rx_prio3_pause",
      "rx_prio3_pause_duration",
      "tx_prio3_pause",
      "tx_prio3_pause_duration",
      "rx_prio3_pause_transition",
      "rx_prio5_pause",
      "rx_prio5_pause_duration",
      "tx_prio5_pause",
      "tx_prio5_pause_duration",
      "rx_prio5_pause_transition",
  };
  const std::vector<MappedCounter> expected = {
      {PortCounter::kPauseFrames, kRx, 3, 0},
      {PortCounter::kPauseDurationMicros, kRx, 3, 1},
      {PortCounter::kPauseFrames, kTx, 3, 2},
      {PortCounter::kPauseDurationMicros, kTx, 3, 3},
      {PortCounter::kPauseTransitions, kRx, 3, 4},
      {PortCounter::kPauseFrames, kRx, 5, 5},
      {PortCounter::kPauseDurationMicros, kRx, 5, 6},
      {PortCounter::kPauseFrames, kTx, 5, 7},
      {PortCounter::kPauseDurationMicros, kTx, 5, 8},
      {PortCounter::kPauseTransitions, kRx, 5, 9},
  };
  EXPECT_THAT(MapMlx5EthtoolNames(names), ElementsAreArray(expected));
}

TEST(MapMlx5EthtoolNames, PerTcNamesCarryTheTrafficClassIndex) {
  const std::vector<std::string> names = {"rx_prio7_buf_discard", "rx_prio7_cong_discard",
                                          "rx_prio7_marked"};
  const std::vector<MappedCounter> expected = {
      {PortCounter::kTcBufferDiscards, kRx, 7, 0},
      {PortCounter::kTcCongestionDiscards, kRx, 7, 1},
      {PortCounter::kTcEcnMarked, kRx, 7, 2},
  };
  EXPECT_THAT(MapMlx5EthtoolNames(names), ElementsAreArray(expected));
}

TEST(MapMlx5EthtoolNames, RejectsNearMissesAndOtherCounters) {
  const std::vector<std::string> names = {
      // Prefixes, suffixes and substrings of mapped names.
      "rx_prio0_pause_", "rx_prio0_paus", "rx_prio0_pause_duration_x", "xrx_prio0_pause",
      "rx_prio0_pausexduration", "rx_prio_pause", "rx_prio0", "rx_prio", "rx_", "", "prio0_rx_",
      // Priorities outside 0..7 and multi-digit indices.
      "rx_prio8_pause", "rx_prio9_bytes", "rx_prio10_pause", "rx_prio01_pause", "tx_prio-1_pause",
      // Directions the driver does not emit.
      "tx_prio0_pause_transition", "tx_prio0_discards", "tx_prio0_buf_discard", "tx_prio0_marked",
      "rx_pause_storm_warning_events", "tx_global_pause_transition", "rx_global_pause_transition",
      // Per-ring, per-channel, software and MAC-control counters.
      "rx0_packets", "rx0_bytes", "tx0_packets", "ch0_events", "rx_ecn_mark", "rx0_ecn_mark",
      "rx_xsk_ecn_mark", "rx_pause_ctrl_phy", "tx_pause_ctrl_phy", "rx_discards",
      "rx_out_of_buffer2", "RX_PRIO0_PAUSE", "rx_prio0_pause ", " rx_prio0_pause",
      // Other drivers' pause names (Intel ice).
      "tx_priority_3_xoff.nic", "rx_priority_3_xon.nic"};
  EXPECT_THAT(MapMlx5EthtoolNames(names), IsEmpty());
}

TEST(MapMlx5EthtoolNames, PauseIsNotTakenFromPauseDuration) {
  const std::vector<std::string> names = {"rx_prio0_pause_duration", "rx_prio0_pause"};
  const std::vector<MappedCounter> expected = {
      {PortCounter::kPauseDurationMicros, kRx, 0, 0},
      {PortCounter::kPauseFrames, kRx, 0, 1},
  };
  EXPECT_THAT(MapMlx5EthtoolNames(names), ElementsAreArray(expected));
}

// Kernels before the rx_prio%d_* rename printed "prio%d_%s" over the same per-priority PPCNT
// group: rx_octets, rx_frames, tx_octets, tx_frames and the five PFC counters.
TEST(MapMlx5EthtoolNames, OldPrioFirstNames) {
  const std::vector<std::string> names = {
      "prio2_rx_octets", "prio2_rx_frames", "prio2_tx_octets", "prio2_tx_frames", "prio3_rx_pause",
      "prio3_rx_pause_duration", "prio3_tx_pause", "prio3_tx_pause_duration",
      "prio3_rx_pause_transition",
      // Not emitted by that driver either.
      "prio3_tx_pause_transition", "prio3_rx_bytes", "prio8_rx_pause"};
  const std::vector<MappedCounter> expected = {
      {PortCounter::kPrioBytes, kRx, 2, 0},        {PortCounter::kPrioPackets, kRx, 2, 1},
      {PortCounter::kPrioBytes, kTx, 2, 2},        {PortCounter::kPrioPackets, kTx, 2, 3},
      {PortCounter::kPauseFrames, kRx, 3, 4},      {PortCounter::kPauseDurationMicros, kRx, 3, 5},
      {PortCounter::kPauseFrames, kTx, 3, 6},      {PortCounter::kPauseDurationMicros, kTx, 3, 7},
      {PortCounter::kPauseTransitions, kRx, 3, 8},
  };
  EXPECT_THAT(MapMlx5EthtoolNames(names), ElementsAreArray(expected));
}

TEST(MapMlx5EthtoolNames, DuplicateSeriesKeepTheFirstName) {
  const std::vector<std::string> names = {"rx_discards_phy", "rx_prio1_pause", "in_discards",
                                          "prio1_rx_pause",  "rx_prio1_pause", "tx_discards_phy"};
  const std::vector<MappedCounter> expected = {
      {PortCounter::kPortDiscards, kRx, -1, 0},
      {PortCounter::kPauseFrames, kRx, 1, 1},
      {PortCounter::kPortDiscards, kTx, -1, 5},
  };
  EXPECT_THAT(MapMlx5EthtoolNames(names), ElementsAreArray(expected));
}

TEST(PortCounterName, EveryCounterHasADistinctStableId) {
  std::vector<std::string> ids;
  for (int i = 0; i <= static_cast<int>(PortCounter::kPciSignalIntegrity); ++i) {
    ids.emplace_back(PortCounterName(static_cast<PortCounter>(i)));
  }
  EXPECT_EQ(ids.front(), "pause_frames");
  EXPECT_EQ(ids.back(), "pci_signal_integrity");
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
  EXPECT_EQ(std::count(ids.begin(), ids.end(), "unknown"), 0);
  EXPECT_EQ(DirectionName(kRx), "rx");
  EXPECT_EQ(DirectionName(kTx), "tx");
  EXPECT_EQ(DirectionName(Direction::kNone), "");
}

}  // namespace
}  // namespace roceqos
