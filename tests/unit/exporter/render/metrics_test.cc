#include "exporter/render/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>

#include "bench/fleet.h"
#include "exporter/core/build_info.h"
#include "exporter/core/error_reason.h"
#include "exporter/render/metric_table.h"
#include "exporter/sampling/transceiver_poller.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/metric_families.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;
using testing::MakeCounters;
using testing::MakeDevice;
using testing::MakePort;
using ::testing::Not;

using testing::Find;
using testing::LabelMap;
using testing::Labels;
using testing::Value;

// A device with every mapped counter kind, a raw stat, and an RDMA port.
Snapshot RichSnapshot() {
  Snapshot s;
  s.sequence = 7;
  s.taken_at = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  Device d = MakeDevice("ens1f0np0", 2);
  d.master = "bond0";
  d.carrier_changes = 4;
  d.rdma_ports.push_back(MakePort("mlx5_0", 1, "ens1f0np0"));

  std::vector<std::string> names;
  std::vector<uint64_t> values;
  std::vector<MappedCounter> mapped;
  auto add = [&](std::string name, uint64_t value, PortCounter c, Direction dir, int8_t index) {
    mapped.push_back({c, dir, index, static_cast<uint32_t>(names.size())});
    names.push_back(std::move(name));
    values.push_back(value);
  };
  add("rx_prio3_pause", 100, PortCounter::kPauseFrames, Direction::kRx, 3);
  add("tx_prio3_pause", 101, PortCounter::kPauseFrames, Direction::kTx, 3);
  add("rx_prio3_pause_duration", 2'500'000, PortCounter::kPauseDurationMicros, Direction::kRx, 3);
  add("tx_prio3_pause_duration", 1'500, PortCounter::kPauseDurationMicros, Direction::kTx, 3);
  add("rx_prio3_pause_transition", 9, PortCounter::kPauseTransitions, Direction::kRx, 3);
  add("rx_prio3_packets", 1000, PortCounter::kPrioPackets, Direction::kRx, 3);
  add("tx_prio3_bytes", 64000, PortCounter::kPrioBytes, Direction::kTx, 3);
  add("rx_prio3_discards", 4, PortCounter::kPrioDiscards, Direction::kRx, 3);
  add("rx_prio0_buf_discard", 5, PortCounter::kTcBufferDiscards, Direction::kRx, 0);
  add("rx_prio0_cong_discard", 6, PortCounter::kTcCongestionDiscards, Direction::kRx, 0);
  add("rx_prio2_marked", 7, PortCounter::kTcEcnMarked, Direction::kRx, 2);
  add("rx_global_pause", 8, PortCounter::kGlobalPauseFrames, Direction::kRx, -1);
  add("tx_global_pause_duration", 3'000'000, PortCounter::kGlobalPauseDurationMicros,
      Direction::kTx, -1);
  add("tx_pause_storm_warning_events", 1, PortCounter::kPauseStormWarningEvents, Direction::kTx,
      -1);
  add("tx_pause_storm_error_events", 2, PortCounter::kPauseStormErrorEvents, Direction::kTx, -1);
  add("rx_discards_phy", 11, PortCounter::kPortDiscards, Direction::kRx, -1);
  add("rx_out_of_buffer", 12, PortCounter::kPortOutOfBuffer, Direction::kRx, -1);
  add("rx_buffer_passed_thres_phy", 13, PortCounter::kPortBufferPassedThreshold, Direction::kRx,
      -1);
  add("tx_pci_signal_integrity", 34, PortCounter::kPciSignalIntegrity, Direction::kTx, -1);
  names.push_back("rx_vport_rdma_unicast_packets");
  values.push_back(77);

  DeviceSnapshot ds;
  ds.device = std::make_shared<const Device>(d);
  ds.ethtool =
      EthtoolSample{CounterSet{std::make_shared<const std::vector<std::string>>(names), values},
                    std::make_shared<const std::vector<MappedCounter>>(mapped),
                    std::make_shared<const std::vector<uint32_t>>(
                        std::vector<uint32_t>{static_cast<uint32_t>(names.size() - 1)}),
                    3};
  ds.rdma.push_back(RdmaPortSample{
      d.rdma_ports[0], MakeCounters({"rx_write_requests", "out_of_sequence", "rp_cnp_ignored",
                                     "rp_cnp_handled", "np_ecn_marked_roce_packets", "np_cnp_sent"},
                                    {10, 20, 30, 40, 50, 60})});
  s.devices.push_back(std::move(ds));
  s.sources["discovery"] = {0.002, true};
  s.sources["ethtool"] = {0.0005, true};
  s.sources["rdma"] = {0.0, false};
  s.errors[{"ethtool", ErrorReason::kDeviceGone}] = 2;
  s.sampler = {.configured_period_seconds = 0.25,
               .effective_period_seconds = 0.5,
               .budget_ratio = 0.5,
               .last_kernel_seconds = 0.2,
               .overruns = 3,
               .samples = 7};
  auto transceivers = std::make_shared<TransceiverState>();
  Transceiver module;
  module.module_type = "QSFP28";
  module.temperature_celsius = 41.5;
  transceivers->modules["ens1f0np0"] = {.module = module, .read_seconds = 0.04, .access = {}};
  transceivers->reads = 1;
  transceivers->errors["other"] = 0;
  s.transceivers = std::move(transceivers);
  auto lldp = std::make_shared<LldpState>();  // lldpd not running: only presence and self metrics
  lldp->failure = LldpAbsence::kLldpdNotRunning;
  lldp->queries = 1;
  lldp->errors["lldpd_not_running"] = 1;
  lldp->interval_seconds = 10;
  lldp->library = "/usr/lib/x86_64-linux-gnu/liblldpctl.so.4.9.1";
  s.lldp = std::move(lldp);
  auto links = std::make_shared<LinkState>();  // one failed read: the self counter
  links->errors["device_gone"] = 1;
  s.links = std::move(links);
  auto pcie = std::make_shared<PcieState>();
  pcie->links["ens1f0np0"].function = {.address = "0000:3b:00.0",
                                       .speed_gts = 16.0,
                                       .max_speed_gts = 16.0,
                                       .width = 16,
                                       .max_width = 16,
                                       .aer_correctable = 0,
                                       .aer_nonfatal = 0,
                                       .aer_fatal = 0};
  pcie->reads = 1;
  pcie->errors["malformed"] = 0;
  pcie->interval_seconds = 30;
  s.pcie = std::move(pcie);
  auto gids = std::make_shared<GidState>();
  gids->ports = {{"ens1f0np0", "mlx5_0", 1, 2, 2}};
  gids->netdevs["ens1f0np0"] = {
      {1, 1}, {{"ens1f0np0", "192.0.2.1", AddressFamily::kIpv4, GidMissReason::kNoGid, ""}}};
  gids->interval_seconds = 60;
  s.gids = std::move(gids);
  auto attribution = std::make_shared<AttributionState>();
  attribution->rows = {{"ens1f0np0", "mlx5_0", "kernel", "ib_core", "", "", "", 1}};
  attribution->reads = 1;
  attribution->errors["malformed"] = 0;
  attribution->interval_seconds = 15;
  s.attribution = std::move(attribution);
  return s;
}

// As /metrics renders it: the snapshot plus the HTTP server's own counters.
Families RenderRich() {
  const Snapshot s = RichSnapshot();
  ServingStats serving;
  serving.requests_by_code = {{"200", 1}};
  return RenderSnapshot(&s, &serving);
}

TEST(RenderSnapshot, MapsEthtoolCountersToFamiliesWithLabelsAndBaseUnits) {
  const Families f = RenderRich();
  const std::string n = "ens1f0np0";
  EXPECT_EQ(
      Value(f, "roce_pfc_pause_frames_total", {{"netdev", n}, {"prio", "3"}, {"direction", "rx"}}),
      100);
  EXPECT_EQ(
      Value(f, "roce_pfc_pause_frames_total", {{"netdev", n}, {"prio", "3"}, {"direction", "tx"}}),
      101);
  // µs -> s
  EXPECT_DOUBLE_EQ(Value(f, "roce_pfc_pause_duration_seconds_total",
                         {{"netdev", n}, {"prio", "3"}, {"direction", "rx"}}),
                   2.5);
  EXPECT_DOUBLE_EQ(Value(f, "roce_pfc_pause_duration_seconds_total",
                         {{"netdev", n}, {"prio", "3"}, {"direction", "tx"}}),
                   0.0015);
  EXPECT_DOUBLE_EQ(
      Value(f, "roce_global_pause_duration_seconds_total", {{"netdev", n}, {"direction", "tx"}}),
      3.0);
  EXPECT_EQ(Value(f, "roce_pfc_pause_transitions_total", {{"netdev", n}, {"prio", "3"}}), 9);
  EXPECT_EQ(
      Value(f, "roce_prio_packets_total", {{"netdev", n}, {"prio", "3"}, {"direction", "rx"}}),
      1000);
  EXPECT_EQ(Value(f, "roce_prio_bytes_total", {{"netdev", n}, {"prio", "3"}, {"direction", "tx"}}),
            64000);
  EXPECT_EQ(Value(f, "roce_prio_discards_total", {{"netdev", n}, {"prio", "3"}}), 4);
  EXPECT_EQ(Value(f, "roce_tc_discards_total", {{"netdev", n}, {"tc", "0"}, {"reason", "buffer"}}),
            5);
  EXPECT_EQ(
      Value(f, "roce_tc_discards_total", {{"netdev", n}, {"tc", "0"}, {"reason", "congestion"}}),
      6);
  EXPECT_EQ(Value(f, "roce_tc_ecn_marked_packets_total", {{"netdev", n}, {"tc", "2"}}), 7);
  EXPECT_EQ(Value(f, "roce_global_pause_frames_total", {{"netdev", n}, {"direction", "rx"}}), 8);
  EXPECT_EQ(Value(f, "roce_pause_storm_events_total", {{"netdev", n}, {"severity", "warning"}}), 1);
  EXPECT_EQ(Value(f, "roce_pause_storm_events_total", {{"netdev", n}, {"severity", "error"}}), 2);
  EXPECT_EQ(Value(f, "roce_port_discards_total", {{"netdev", n}, {"direction", "rx"}}), 11);
  EXPECT_EQ(Value(f, "roce_port_rx_out_of_buffer_packets_total", {{"netdev", n}}), 12);
  EXPECT_EQ(Value(f, "roce_port_rx_buffer_passed_threshold_total", {{"netdev", n}}), 13);
  EXPECT_EQ(Value(f, "roce_ethtool_string_set_changes_total", {{"netdev", n}}), 3);
  EXPECT_EQ(
      Value(f, "roce_ethtool_stat", {{"netdev", n}, {"stat", "rx_vport_rdma_unicast_packets"}}),
      77);
  EXPECT_EQ(Find(f, "roce_ethtool_stat")->type, prometheus::MetricType::Untyped);
  EXPECT_EQ(Find(f, "roce_pfc_pause_frames_total")->type, prometheus::MetricType::Counter);
}

TEST(RenderSnapshot, SplitsRdmaCountersIntoDcqcnFamiliesAndTheRest) {
  const Families f = RenderRich();
  const LabelMap port{{"device", "mlx5_0"}, {"port", "1"}};
  EXPECT_EQ(Value(f, "roce_cnp_sent_total", port), 60);
  EXPECT_EQ(Value(f, "roce_cnp_handled_total", port), 40);
  EXPECT_EQ(Value(f, "roce_cnp_ignored_total", port), 30);
  EXPECT_EQ(Value(f, "roce_ecn_marked_packets_total", port), 50);
  const prometheus::MetricFamily* other = Find(f, "roce_rdma_hw_stat_total");
  ASSERT_NE(other, nullptr);
  std::set<std::string> counters;
  for (const auto& m : other->metric) counters.insert(Labels(m).at("stat"));
  EXPECT_EQ(counters, (std::set<std::string>{"rx_write_requests", "out_of_sequence"}))
      << "every counter exactly once across the RDMA families";
  EXPECT_EQ(Value(f, "roce_rdma_hw_stat_total",
                  {{"device", "mlx5_0"}, {"port", "1"}, {"stat", "out_of_sequence"}}),
            20);
}

TEST(RenderSnapshot, DescribesDevicesAndPorts) {
  const Families f = RenderRich();
  EXPECT_EQ(Value(f, "roce_netdev_info",
                  {{"netdev", "ens1f0np0"},
                   {"driver", "mlx5_core"},
                   {"pci", "0000:3b:00.2"},
                   {"role", "pf"},
                   {"state", "up"},
                   {"master", "bond0"}}),
            1);
  EXPECT_EQ(Value(f, "roce_device_info",
                  {{"device", "mlx5_0"},
                   {"port", "1"},
                   {"netdev", "ens1f0np0"},
                   {"pci", "0000:3b:00.2"},
                   {"role", "pf"},
                   {"state", "active"}}),
            1);
}

TEST(RenderSnapshot, ReportsSelfMetrics) {
  const Families f = RenderRich();
  EXPECT_EQ(
      Value(f, "roce_exporter_build_info", {{"version", kVersion}, {"revision", kGitRevision}}), 1);
  EXPECT_DOUBLE_EQ(Value(f, "roce_exporter_collect_duration_seconds", {{"source", "discovery"}}),
                   0.002);
  EXPECT_EQ(Value(f, "roce_exporter_source_available", {{"source", "rdma"}}), 0);
  EXPECT_EQ(Value(f, "roce_exporter_source_available", {{"source", "ethtool"}}), 1);
  EXPECT_EQ(Value(f, "roce_exporter_collect_errors_total",
                  {{"source", "ethtool"}, {"reason", "device_gone"}}),
            2);
  EXPECT_EQ(Value(f, "roce_exporter_sample_period_seconds", {}), 0.5);
  EXPECT_EQ(Value(f, "roce_exporter_configured_sample_period_seconds", {}), 0.25);
  EXPECT_EQ(Value(f, "roce_exporter_sample_budget_ratio", {}), 0.5);
  EXPECT_EQ(Value(f, "roce_exporter_sample_kernel_seconds", {}), 0.2);
  EXPECT_EQ(Value(f, "roce_exporter_sample_overruns_total", {}), 3);
  EXPECT_EQ(Value(f, "roce_exporter_samples_total", {}), 7);
  EXPECT_EQ(Value(f, "roce_exporter_last_sample_timestamp_seconds", {}), 1700000000);
}

TEST(RenderSnapshot, CollectErrorsExistAtZeroForEveryReasonOfEverySourceThatRan) {
  Snapshot s = RichSnapshot();
  s.errors[{"sampler", ErrorReason::kException}] =
      1;  // not a source with a status: rendered as counted
  const Families f = RenderSnapshot(&s);
  const prometheus::MetricFamily* errors = Find(f, "roce_exporter_collect_errors_total");
  ASSERT_NE(errors, nullptr);
  // 3 sources x 8 reasons, plus the sampler's own error.
  EXPECT_EQ(errors->metric.size(), 3 * std::size(kErrorReasonNames) + 1);
  for (const char* source : {"discovery", "ethtool", "rdma"}) {
    for (const auto& [_, reason] : kErrorReasonNames) {
      const double want = source == std::string_view("ethtool") && reason == "device_gone" ? 2 : 0;
      EXPECT_EQ(Value(f, "roce_exporter_collect_errors_total",
                      {{"source", source}, {"reason", std::string(reason)}}),
                want)
          << source << " " << reason;
    }
  }
  EXPECT_EQ(Value(f, "roce_exporter_collect_errors_total",
                  {{"source", "sampler"}, {"reason", "exception"}}),
            1);
  EXPECT_TRUE(std::isnan(
      Value(f, "roce_exporter_collect_errors_total", {{"source", "sampler"}, {"reason", "busy"}})))
      << "no reasons made up for a name that is not a source";
}

TEST(ErrorReason, EveryReasonIsInTheZeroInitialisedSet) {
  std::set<std::string_view> known;
  for (const auto& entry : kErrorReasonNames) known.insert(entry.name);
  EXPECT_EQ(known.size(), std::size(kErrorReasonNames)) << "duplicate reason";
  std::set<std::string_view> seen;
  for (int errnum = kErrnoException; errnum < 256; ++errnum) {
    const std::string_view reason = ReasonName(ReasonOf(MakeError(errnum, "test")));
    EXPECT_TRUE(known.count(reason)) << "errno " << errnum << " -> " << reason;
    seen.insert(reason);
  }
  EXPECT_EQ(seen, known) << "a zero-initialised reason that ReasonOf never returns";
}

TEST(RenderSnapshot, BeforeTheFirstSampleOnlyBuildInfo) {
  const Families f = RenderSnapshot(nullptr);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].name, "roce_exporter_build_info");
}

TEST(RenderSnapshot, EmptySnapshotHasNoEmptyFamilies) {
  Snapshot s;
  for (const auto& family : RenderSnapshot(&s)) {
    EXPECT_FALSE(family.metric.empty()) << family.name;
  }
}

TEST(RenderSnapshot, EverySampleMatchesItsTableEntry) {
  const Families families = RenderRich();
  std::set<std::string> rendered;
  for (const auto& family : families) {
    const MetricDef* def = nullptr;
    for (const MetricDef& d : AllMetrics()) {
      if (d.name == family.name) def = &d;
    }
    ASSERT_NE(def, nullptr) << family.name << " is not declared in kMetricTable";
    EXPECT_TRUE(rendered.insert(family.name).second) << "family rendered twice: " << family.name;
    EXPECT_EQ(family.help, def->help);
    std::set<LabelMap> series;
    for (const auto& m : family.metric) {
      ASSERT_EQ(m.label.size(), def->label_count()) << family.name;
      for (size_t i = 0; i < m.label.size(); ++i) EXPECT_EQ(m.label[i].name, def->labels[i]);
      EXPECT_TRUE(series.insert(Labels(m)).second) << "duplicate series in " << family.name;
    }
  }
  // The rich snapshot exercises every family of the core areas.
  for (const MetricDef& d : AllMetrics()) {
    if (d.area == "ethtool" || d.area == "rdma" || d.area == "device" || d.area == "self") {
      EXPECT_TRUE(rendered.count(std::string(d.name))) << d.name << " never rendered";
    }
  }
}

TEST(RenderSnapshot, SerializesToPrometheusText) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, RenderRich());
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("# TYPE roce_pfc_pause_frames_total counter\n"));
  EXPECT_THAT(text,
              HasSubstr("roce_pfc_pause_duration_seconds_total{netdev=\"ens1f0np0\",prio=\"3\","
                        "direction=\"rx\"} 2.5\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE roce_ethtool_stat untyped\n"));
  EXPECT_THAT(text, Not(HasSubstr("exposer_")));
}

TEST(RenderSnapshot, SkipsMappedIndicesOutsideTheValues) {
  Snapshot s = RichSnapshot();
  EthtoolSample& e = *s.devices[0].ethtool;
  auto mapped = *e.mapped;
  mapped.push_back({PortCounter::kPauseFrames, Direction::kRx, 5, 10'000});
  e.mapped = std::make_shared<const std::vector<MappedCounter>>(mapped);
  const Families f = RenderSnapshot(&s);
  EXPECT_TRUE(std::isnan(Value(f, "roce_pfc_pause_frames_total",
                               {{"netdev", "ens1f0np0"}, {"prio", "5"}, {"direction", "rx"}})));
}

// The const-metric pattern: nothing persists between renders, so a device that vanished from the
// snapshot leaves no series behind.
TEST(RenderSnapshot, RendersOnlyWhatTheSnapshotHolds) {
  EXPECT_EQ(RenderSnapshot(nullptr).size(), 1u);  // build info only
  const Snapshot rich = RichSnapshot();
  EXPECT_NE(Find(RenderSnapshot(&rich), "roce_pfc_pause_frames_total"), nullptr);
  const Snapshot gone;  // the device is gone
  EXPECT_EQ(Find(RenderSnapshot(&gone), "roce_pfc_pause_frames_total"), nullptr);
}

// /metrics writes the text format directly; every render is byte for byte what prometheus-cpp's
// TextSerializer writes for the families of the same snapshot.
TEST(DirectText, IsTheSerializersTextForEverySnapshotShape) {
  const Snapshot rich = RichSnapshot();
  ServingStats serving;
  serving.requests_by_code = {{"200", 12}, {"503", 0}};
  serving.render_seconds = 0.000123;
  EXPECT_EQ(testing::DirectText(&rich, &serving), testing::SerializedText(&rich, &serving));
  const Snapshot empty;
  EXPECT_EQ(testing::DirectText(&empty), testing::SerializedText(&empty));
  EXPECT_EQ(testing::DirectText(nullptr), testing::SerializedText(nullptr));
}

// A 64-port mlx5-like node with every ethtool stat exported raw (~50 k series, the real mlx5
// stat names of capture 24).
TEST(DirectText, IsTheSerializersTextForAFleetNodeWithEveryRawStat) {
  testing::FakeClock clock;
  auto sampler = bench::MakeFleetSampler(64, clock, std::regex(".*"));
  const auto snapshot = sampler->Latest();
  const std::string direct = testing::DirectText(snapshot.get());
  EXPECT_GT(direct.size(), 1'000'000u);
  EXPECT_EQ(direct, testing::SerializedText(snapshot.get()));
}

// collect[]: a sink limited to some groups writes exactly the families of those areas, in the
// same order and bytes as the full body.
TEST(DirectText, GroupsSelectWholeFamiliesOfTheirAreas) {
  const Snapshot rich = RichSnapshot();
  const std::string all = testing::DirectText(&rich);
  MetricGroups groups = *MetricGroups::Named("ethtool");
  groups |= *MetricGroups::Named("self");
  std::string some;
  MetricSink sink(some, groups);
  RenderSnapshot(&rich, nullptr, sink);
  std::string expected;
  std::istringstream lines(all);
  std::string family, line;
  for (std::getline(lines, line); lines; std::getline(lines, line)) {
    if (line.rfind("# HELP ", 0) == 0) family = line.substr(7, line.find(' ', 7) - 7);
    std::string_view area;
    for (const MetricDef& d : AllMetrics()) {
      if (d.name == family) area = d.area;
    }
    if (groups.Contains(area)) expected += line + "\n";
  }
  EXPECT_THAT(some, HasSubstr("roce_pfc_pause_frames_total{"));
  EXPECT_THAT(some, HasSubstr("roce_exporter_build_info{"));
  EXPECT_THAT(some, Not(HasSubstr("roce_rdma_")));
  EXPECT_EQ(some, expected);
  std::string none;
  MetricSink empty(none, MetricGroups::None());
  RenderSnapshot(&rich, nullptr, empty);
  EXPECT_EQ(none, "");
}

}  // namespace
}  // namespace roceqos
