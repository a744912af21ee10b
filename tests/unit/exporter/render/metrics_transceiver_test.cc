#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "exporter/render/metrics.h"
#include "exporter/sampling/transceiver_poller.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/metric_families.h"

namespace roceqos {
namespace {

using testing::Count;
using testing::Find;
using testing::Labels;
using testing::MakeDevice;
using testing::Value;

Transceiver Qsfp28() {
  Transceiver t;
  t.spec = ModuleSpec::kSff8636;
  t.module_type = "QSFP28";
  t.vendor_name = "SIMNIC";
  t.part_number = "SIM-QSFP28-SR4";
  t.revision = "A1";
  t.serial_number = "SN0001";
  t.temperature_celsius = 41.5;
  t.supply_voltage_volts = 3.312;
  t.temperature_flags.high_alarm = true;
  for (int i = 0; i < 4; ++i) {
    LaneMonitors lane;
    lane.rx_power_watts = 0.000812;
    lane.tx_power_watts = 0.000655;
    lane.tx_bias_amperes = 0.00702;
    t.lanes.push_back(lane);
  }
  t.lanes[2].rx_power_flags.low_warning = true;
  ModuleThresholds th;
  th.temperature_celsius = {75, -5, 70, 0};
  th.rx_power_watts = {0.0022, 0.00004, 0.0011, 0.0001};
  t.thresholds = th;
  return t;
}

Snapshot WithModules(std::vector<std::string> netdevs, bool serial = false) {
  Snapshot s;
  for (const std::string& n : netdevs) {
    DeviceSnapshot d;
    d.device = std::make_shared<const Device>(MakeDevice(n, 2));
    s.devices.push_back(d);
  }
  auto state = std::make_shared<TransceiverState>();
  state->modules["sim0"] = {.module = Qsfp28(), .read_seconds = 0.031, .access = {}};
  Transceiver cmis = Qsfp28();
  cmis.spec = ModuleSpec::kCmis;
  cmis.module_type = "QSFP-DD";
  cmis.firmware_version = "3.1";
  cmis.thresholds.reset();
  state->modules["sim1"] = {.module = cmis,
                            .read_seconds = 0.05,
                            .access = {.method = ModuleAccessMethod::kIoctl,
                                       .fallback_reason = "EOPNOTSUPP",
                                       .unread_pages = {0x01, 0x02, 0x11}}};
  state->reads = 12;
  state->errors = {{"other", 2}, {"permission", 0}};
  state->interval_seconds = 60;
  state->last_round_seconds = 0.09;
  state->serial_numbers = serial;
  s.transceivers = state;
  return s;
}

TEST(RenderTransceivers, GaugesInBaseUnitsPerLaneWithOneBasedLanes) {
  const Snapshot s = WithModules({"sim0", "sim1"});
  const Families f = RenderSnapshot(&s);
  EXPECT_DOUBLE_EQ(Value(f, "roce_transceiver_temperature_celsius", {{"netdev", "sim0"}}), 41.5);
  EXPECT_DOUBLE_EQ(Value(f, "roce_transceiver_supply_voltage_volts", {{"netdev", "sim0"}}), 3.312);
  EXPECT_DOUBLE_EQ(Value(f, "roce_transceiver_rx_power_watts", {{"netdev", "sim0"}, {"lane", "1"}}),
                   0.000812);
  EXPECT_DOUBLE_EQ(Value(f, "roce_transceiver_tx_power_watts", {{"netdev", "sim0"}, {"lane", "4"}}),
                   0.000655);
  EXPECT_DOUBLE_EQ(
      Value(f, "roce_transceiver_tx_bias_amperes", {{"netdev", "sim1"}, {"lane", "4"}}), 0.00702);
  EXPECT_TRUE(
      std::isnan(Value(f, "roce_transceiver_rx_power_watts", {{"netdev", "sim0"}, {"lane", "0"}})));
  EXPECT_EQ(Count(f, "roce_transceiver_rx_power_watts"), 8u);
}

TEST(RenderTransceivers, InfoCarriesIdentityAndSerialOnlyWhenAskedFor) {
  const Snapshot s = WithModules({"sim0", "sim1"});
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_transceiver_info",
                  {{"netdev", "sim1"},
                   {"type", "QSFP-DD"},
                   {"spec", "cmis"},
                   {"vendor", "SIMNIC"},
                   {"part_number", "SIM-QSFP28-SR4"},
                   {"revision", "A1"},
                   {"firmware", "3.1"},
                   {"serial", ""}}),
            1);
  const Snapshot with_serial = WithModules({"sim0"}, true);
  const Families g = RenderSnapshot(&with_serial);
  EXPECT_EQ(Value(g, "roce_transceiver_info",
                  {{"netdev", "sim0"},
                   {"type", "QSFP28"},
                   {"spec", "sff8636"},
                   {"vendor", "SIMNIC"},
                   {"part_number", "SIM-QSFP28-SR4"},
                   {"revision", "A1"},
                   {"firmware", ""},
                   {"serial", "SN0001"}}),
            1);
}

TEST(RenderTransceivers, OnlyRaisedFlagsAreSeriesAndThresholdsWherePresent) {
  const Snapshot s = WithModules({"sim0", "sim1"});
  const Families f = RenderSnapshot(&s);
  const std::string flag = "roce_transceiver_flag";
  EXPECT_EQ(
      Value(f, flag,
            {{"netdev", "sim0"}, {"monitor", "temperature"}, {"lane", ""}, {"kind", "high_alarm"}}),
      1);
  EXPECT_TRUE(std::isnan(Value(
      f, flag,
      {{"netdev", "sim0"}, {"monitor", "temperature"}, {"lane", ""}, {"kind", "high_warning"}})))
      << "a clear flag has no series";
  EXPECT_EQ(
      Value(f, flag,
            {{"netdev", "sim0"}, {"monitor", "rx_power"}, {"lane", "3"}, {"kind", "low_warning"}}),
      1);
  EXPECT_TRUE(std::isnan(Value(
      f, flag,
      {{"netdev", "sim0"}, {"monitor", "rx_power"}, {"lane", "2"}, {"kind", "low_warning"}})));
  // Per module: the two raised flags (temperature high alarm, lane 3 Rx low warning), nothing else.
  EXPECT_EQ(Count(f, flag), 2u * 2);
  const std::string th = "roce_transceiver_threshold";
  EXPECT_DOUBLE_EQ(
      Value(f, th, {{"netdev", "sim0"}, {"monitor", "rx_power"}, {"kind", "low_alarm"}}), 0.00004);
  EXPECT_DOUBLE_EQ(
      Value(f, th, {{"netdev", "sim0"}, {"monitor", "temperature"}, {"kind", "high_alarm"}}), 75);
  // sim1 has no threshold page: no threshold series rather than zeros.
  EXPECT_TRUE(std::isnan(
      Value(f, th, {{"netdev", "sim1"}, {"monitor", "temperature"}, {"kind", "high_alarm"}})));
  EXPECT_EQ(Count(f, th), 5u * 4);
}

TEST(RenderTransceivers, NetdevNotInTheSnapshotHasNoSeries) {
  // sim1 left the selection (or vanished) after the poller's last round.
  const Snapshot s = WithModules({"sim0"});
  const Families f = RenderSnapshot(&s);
  EXPECT_TRUE(std::isnan(Value(f, "roce_transceiver_temperature_celsius", {{"netdev", "sim1"}})));
  for (const auto& family : f) {
    for (const auto& m : family.metric) {
      EXPECT_NE(Labels(m)["netdev"], "sim1") << family.name;
    }
  }
  EXPECT_EQ(Count(f, "roce_exporter_transceiver_read_duration_seconds"), 1u);
}

TEST(RenderTransceivers, SelfMetricsOfTheReadCost) {
  const Snapshot s = WithModules({"sim0", "sim1"});
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_exporter_transceiver_reads_total", {}), 12);
  EXPECT_EQ(Value(f, "roce_exporter_transceiver_read_errors_total", {{"reason", "other"}}), 2);
  EXPECT_EQ(Value(f, "roce_exporter_transceiver_read_errors_total", {{"reason", "permission"}}), 0);
  EXPECT_DOUBLE_EQ(
      Value(f, "roce_exporter_transceiver_read_duration_seconds", {{"netdev", "sim0"}}), 0.031);
  EXPECT_DOUBLE_EQ(Value(f, "roce_exporter_transceiver_round_duration_seconds", {}), 0.09);
  EXPECT_DOUBLE_EQ(Value(f, "roce_exporter_transceiver_interval_seconds", {}), 60);
}

TEST(RenderTransceivers, PermissionDeniedFollowsTheLastRound) {
  Snapshot s = WithModules({"sim0"});
  EXPECT_EQ(Value(RenderSnapshot(&s), "roce_exporter_transceiver_permission_denied", {}), 0);
  auto denied = std::make_shared<TransceiverState>(*s.transceivers);
  denied->permission_denied = true;
  s.transceivers = denied;
  EXPECT_EQ(Value(RenderSnapshot(&s), "roce_exporter_transceiver_permission_denied", {}), 1);
}

TEST(RenderTransceivers, AccessInfoSaysNetlinkOrIoctlAndWhatIsMissing) {
  const Snapshot s = WithModules({"sim0", "sim1"});
  const Families f = RenderSnapshot(&s);
  const std::string access = "roce_exporter_transceiver_access_info";
  EXPECT_EQ(Value(f, access, {{"netdev", "sim0"}, {"method", "netlink"}, {"unread_pages", ""}}), 1);
  EXPECT_EQ(
      Value(f, access, {{"netdev", "sim1"}, {"method", "ioctl"}, {"unread_pages", "01h 02h 11h"}}),
      1);
  EXPECT_EQ(Count(f, access), 2u);  // one per netdev with a module
}

TEST(RenderTransceivers, OffMeansNoTransceiverFamilies) {
  Snapshot s = WithModules({"sim0"});
  s.transceivers.reset();  // --transceiver.interval=0
  for (const auto& family : RenderSnapshot(&s)) {
    EXPECT_EQ(family.name.find("transceiver"), std::string::npos) << family.name;
  }
}

TEST(RenderDeviceInfo, CarrierChangesWhenTheKernelReportsThem) {
  Snapshot s = WithModules({"sim0", "sim1"});
  Device d = *s.devices[0].device;
  d.carrier_changes = 6;
  s.devices[0].device = std::make_shared<const Device>(d);
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Value(f, "roce_netdev_carrier_changes_total", {{"netdev", "sim0"}}), 6);
  EXPECT_EQ(Count(f, "roce_netdev_carrier_changes_total"), 1u);  // sim1: no IFLA_CARRIER_CHANGES
}

TEST(RenderTransceivers, DirectTextIsTheSerializersText) {
  const Snapshot s = WithModules({"sim0", "sim1"}, true);
  EXPECT_EQ(testing::DirectText(&s), testing::SerializedText(&s));
}

}  // namespace
}  // namespace roceqos
