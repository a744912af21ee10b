#include "collectors/transceiver/cmis.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "collectors/transceiver/module_eeprom.h"
#include "tests/unit/support/module_pages.h"

namespace roceqos {
namespace {

using testing_support::LoadModulePagesFixture;
using testing_support::PageWriter;

constexpr double kWattLsb = 1e-7;
constexpr double kAmpLsb = 2e-6;

ModulePages MinimalQsfpDd() {
  ModulePages pages;
  PageWriter(pages.lower).Byte(0, 0x18).Byte(1, 0x50).Byte(3, 0x06).Byte(88, 0x88);
  PageWriter(pages.upper[0x00]).Byte(128, 0x18);
  PageWriter(pages.upper[0x01]).Byte(151, 0x10).Byte(160, 0x07);
  PageWriter(pages.upper[0x02]);
  PageWriter(pages.upper[0x11]);
  return pages;
}

TEST(Cmis, RealisticQsfpDdFixture) {
  auto pages = LoadModulePagesFixture("qsfpdd_sr8_cmis.pages");
  ASSERT_TRUE(pages.ok()) << pages.error().message;
  auto t = DecodeCmis(*pages);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->spec, ModuleSpec::kCmis);
  EXPECT_EQ(t->module_type, "QSFP-DD");
  EXPECT_EQ(t->spec_revision, "CMIS 5.0");
  EXPECT_EQ(t->firmware_version, "4.2");
  EXPECT_EQ(t->vendor_name, "NVIDIA");
  EXPECT_EQ(t->part_number, "MMA1Z00-NS400");
  EXPECT_EQ(t->revision, "B1");
  EXPECT_EQ(t->serial_number, "MT2231FT01187");
  EXPECT_TRUE(t->data_ready);
  EXPECT_DOUBLE_EQ(*t->temperature_celsius, 71.25);
  EXPECT_NEAR(*t->supply_voltage_volts, 3.3012, 1e-9);
  EXPECT_EQ(t->temperature_flags, (MonitorFlags{.high_warning = true}));
  ASSERT_EQ(t->lanes.size(), 8u);
  EXPECT_NEAR(*t->lanes[0].rx_power_watts, 0.6310e-3, kWattLsb / 2);
  EXPECT_NEAR(*t->lanes[0].tx_bias_amperes, 7.10e-3, kAmpLsb / 2);
  EXPECT_NEAR(*t->lanes[0].tx_power_watts, 0.7079e-3, kWattLsb / 2);
  EXPECT_NEAR(*t->lanes[2].rx_power_watts, 0.0400e-3, kWattLsb / 2);
  EXPECT_NEAR(*t->lanes[7].tx_power_watts, 0.7080e-3, kWattLsb / 2);
  EXPECT_EQ(t->lanes[2].rx_power_flags, (MonitorFlags{.low_alarm = true, .low_warning = true}));
  for (size_t i : {0, 1, 3, 4, 5, 6, 7}) EXPECT_FALSE(t->lanes[i].rx_power_flags.Any()) << i;
  ASSERT_TRUE(t->thresholds.has_value());
  EXPECT_EQ(t->thresholds->temperature_celsius, (MonitorThresholds{80, -5, 75, 0}));
  EXPECT_NEAR(t->thresholds->supply_voltage_volts.low_alarm, 3.135, 1e-9);
  EXPECT_NEAR(t->thresholds->tx_power_watts.high_alarm, 3.1623e-3, kWattLsb / 2);
  EXPECT_NEAR(t->thresholds->tx_bias_amperes.high_warning, 12e-3, kAmpLsb / 2);
  EXPECT_NEAR(t->thresholds->rx_power_watts.low_alarm, 0.0447e-3, kWattLsb / 2);
}

TEST(Cmis, EveryLaneFieldAtItsOwnOffset) {
  ModulePages pages = MinimalQsfpDd();
  PageWriter p11(pages.upper[0x11]);
  for (uint16_t i = 0; i < 8; ++i) {
    p11.U16(154 + 2 * i, 1000 + i).U16(170 + 2 * i, 2000 + i).U16(186 + 2 * i, 3000 + i);
  }
  // One flag byte per (monitor, kind), one bit per lane.
  p11.Byte(139, 0x01).Byte(140, 0x02).Byte(141, 0x04).Byte(142, 0x08);  // Tx power lanes 1-4
  p11.Byte(143, 0x10).Byte(144, 0x20).Byte(145, 0x40).Byte(146, 0x80);  // Tx bias lanes 5-8
  p11.Byte(149, 0x80).Byte(150, 0x00).Byte(151, 0x00).Byte(152, 0x01);  // Rx power lanes 8, 1
  PageWriter(pages.lower).Byte(9, 0x92);                                // temp LA; Vcc HA + LW
  auto t = DecodeCmis(pages);
  ASSERT_TRUE(t.ok()) << t.error().message;
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_DOUBLE_EQ(*t->lanes[i].tx_power_watts, static_cast<double>(1000 + i) * kWattLsb);
    EXPECT_DOUBLE_EQ(*t->lanes[i].tx_bias_amperes, static_cast<double>(2000 + i) * kAmpLsb);
    EXPECT_DOUBLE_EQ(*t->lanes[i].rx_power_watts, static_cast<double>(3000 + i) * kWattLsb);
  }
  EXPECT_EQ(t->lanes[0].tx_power_flags, (MonitorFlags{.high_alarm = true}));
  EXPECT_EQ(t->lanes[1].tx_power_flags, (MonitorFlags{.low_alarm = true}));
  EXPECT_EQ(t->lanes[2].tx_power_flags, (MonitorFlags{.high_warning = true}));
  EXPECT_EQ(t->lanes[3].tx_power_flags, (MonitorFlags{.low_warning = true}));
  EXPECT_EQ(t->lanes[4].tx_bias_flags, (MonitorFlags{.high_alarm = true}));
  EXPECT_EQ(t->lanes[7].tx_bias_flags, (MonitorFlags{.low_warning = true}));
  EXPECT_EQ(t->lanes[7].rx_power_flags, (MonitorFlags{.high_alarm = true}));
  EXPECT_EQ(t->lanes[0].rx_power_flags, (MonitorFlags{.low_warning = true}));
  EXPECT_FALSE(t->lanes[0].tx_bias_flags.Any());
  EXPECT_EQ(t->temperature_flags, (MonitorFlags{.low_alarm = true}));
  EXPECT_EQ(t->supply_voltage_flags, (MonitorFlags{.high_alarm = true, .low_warning = true}));
}

TEST(Cmis, AdvertisementGatesMonitorsAndScalesBias) {
  ModulePages pages = MinimalQsfpDd();
  PageWriter(pages.lower).Byte(88, 0x44);                // 4 media lanes
  PageWriter(pages.upper[0x01]).Byte(160, 0x01 | 0x10);  // bias only, multiplier x4
  PageWriter(pages.upper[0x11]).U16(170, 1000);
  PageWriter(pages.upper[0x02]).U16(184, 500);
  auto t = DecodeCmis(pages);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->lanes.size(), 4u);
  EXPECT_DOUBLE_EQ(*t->lanes[0].tx_bias_amperes, 1000 * kAmpLsb * 4);
  EXPECT_FALSE(t->lanes[0].rx_power_watts.has_value());
  EXPECT_FALSE(t->lanes[0].tx_power_watts.has_value());
  EXPECT_DOUBLE_EQ(t->thresholds->tx_bias_amperes.high_alarm, 500 * kAmpLsb * 4);
}

TEST(Cmis, VersionStateAndFlatMemory) {
  ModulePages pages = MinimalQsfpDd();
  PageWriter(pages.lower).Byte(1, 0x41).Byte(3, 0x04).Byte(39, 7).Byte(40, 13);  // 4.1, PwrDn
  auto t = DecodeCmis(pages);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->spec_revision, "CMIS 4.1");
  EXPECT_EQ(t->firmware_version, "7.13");
  EXPECT_FALSE(t->data_ready);
  EXPECT_EQ(ModuleExtraPages(pages.lower), (std::vector<uint8_t>{0x01, 0x02, 0x11}));

  pages.lower[2] = 0x80;  // flat memory (passive copper)
  EXPECT_TRUE(ModuleExtraPages(pages.lower).empty());
  t = DecodeCmis(pages);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->flat_memory);
  EXPECT_TRUE(t->lanes.empty());
  EXPECT_FALSE(t->thresholds.has_value());
  EXPECT_TRUE(t->temperature_celsius.has_value());
}

TEST(Cmis, MissingOptionalPages) {
  ModulePages pages = MinimalQsfpDd();
  pages.upper.erase(0x11);
  auto no_lanes = DecodeCmis(pages);
  ASSERT_TRUE(no_lanes.ok());
  EXPECT_TRUE(no_lanes->lanes.empty());
  EXPECT_TRUE(no_lanes->thresholds.has_value());
  pages.upper.erase(0x02);
  pages.upper.erase(0x01);
  auto bare = DecodeCmis(pages);
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->thresholds.has_value());
}

TEST(Cmis, BadInputIsAClearError) {
  ModulePages pages = MinimalQsfpDd();
  pages.lower.clear();
  auto empty = DecodeCmis(pages);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "CMIS: lower page is 0 bytes, expected 128");
  pages = MinimalQsfpDd();
  pages.upper.erase(0x00);
  EXPECT_EQ(DecodeCmis(pages).error().message, "CMIS: upper page 00h missing or short");
  pages = MinimalQsfpDd();
  pages.lower[0] = 0x11;
  EXPECT_EQ(DecodeCmis(pages).error().errnum, EMEDIUMTYPE);
  pages.upper[0x11].resize(64);  // a short optional page is treated as missing, never read past
  pages.lower[0] = 0x19;
  auto osfp = DecodeCmis(pages);
  ASSERT_TRUE(osfp.ok());
  EXPECT_EQ(osfp->module_type, "OSFP");
  EXPECT_TRUE(osfp->lanes.empty());
}

TEST(Cmis, GarbageDecodesToFiniteValues) {
  std::mt19937 rng(5);
  for (int round = 0; round < 500; ++round) {
    ModulePages pages;
    for (auto* page : {&pages.lower, &pages.upper[0x00], &pages.upper[0x01], &pages.upper[0x02],
                       &pages.upper[0x11]}) {
      page->resize(kModuleHalfPage);
      for (auto& b : *page) b = static_cast<uint8_t>(rng());
    }
    pages.lower[0] = static_cast<uint8_t>(0x18 + round % 2);
    auto t = DecodeCmis(pages);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_LE(t->lanes.size(), 8u);
    for (const auto& lane : t->lanes) {
      for (const auto& v : {lane.rx_power_watts, lane.tx_power_watts, lane.tx_bias_amperes}) {
        if (v) {
          EXPECT_TRUE(std::isfinite(*v) && *v >= 0);
        }
      }
    }
    if (t->thresholds) {
      EXPECT_TRUE(std::isfinite(t->thresholds->tx_bias_amperes.high_alarm));
    }
    for (char c : t->vendor_name + t->part_number + t->serial_number + t->revision) {
      EXPECT_TRUE(c >= 0x20 && c < 0x7f) << int(c);
    }
  }
}

}  // namespace
}  // namespace roceqos
