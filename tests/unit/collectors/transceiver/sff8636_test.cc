#include "collectors/transceiver/sff8636.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "collectors/transceiver/module_eeprom.h"
#include "tests/unit/support/module_pages.h"

namespace roceqos {
namespace {

using testing_support::LoadModulePagesFixture;
using testing_support::PageWriter;

// Units of the raw words: 1/256 degC, 100 uV, 0.1 uW, 2 uA.
constexpr double kWattLsb = 1e-7;
constexpr double kAmpLsb = 2e-6;

ModulePages MinimalQsfp28() {
  ModulePages pages;
  PageWriter(pages.lower).Byte(0, 0x11).Byte(1, 0x08);
  PageWriter(pages.upper[0x00]).Byte(128, 0x11).Byte(220, 0x0c);
  PageWriter(pages.upper[0x03]);
  return pages;
}

TEST(Sff8636, RealisticQsfp28Fixture) {
  auto pages = LoadModulePagesFixture("qsfp28_sr4.pages");
  ASSERT_TRUE(pages.ok()) << pages.error().message;
  auto t = DecodeSff8636(*pages);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->spec, ModuleSpec::kSff8636);
  EXPECT_EQ(t->module_type, "QSFP28");
  EXPECT_EQ(t->spec_revision, "SFF-8636 rev 2.8-2.10");
  EXPECT_EQ(t->vendor_name, "Mellanox");
  EXPECT_EQ(t->part_number, "MMA1B00-C100D");
  EXPECT_EQ(t->revision, "A5");
  EXPECT_EQ(t->serial_number, "MT2108FT04467");
  EXPECT_FALSE(t->firmware_version.has_value());  // SFF-8636 has no firmware field
  EXPECT_DOUBLE_EQ(*t->temperature_celsius, 36.5);
  EXPECT_NEAR(*t->supply_voltage_volts, 3.2914, 1e-9);
  ASSERT_EQ(t->lanes.size(), 4u);
  const double rx[] = {0.8512e-3, 0.9021e-3, 0.7244e-3, 0.8810e-3};
  const double bias[] = {6.602e-3, 6.750e-3, 6.498e-3, 6.904e-3};
  const double tx[] = {0.7943e-3, 0.8128e-3, 0.7762e-3, 0.8318e-3};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(*t->lanes[i].rx_power_watts, rx[i], kWattLsb / 2) << "lane " << i + 1;
    EXPECT_NEAR(*t->lanes[i].tx_bias_amperes, bias[i], kAmpLsb / 2) << "lane " << i + 1;
    EXPECT_NEAR(*t->lanes[i].tx_power_watts, tx[i], kWattLsb / 2) << "lane " << i + 1;
  }
  EXPECT_EQ(t->lanes[0].rx_power_flags, (MonitorFlags{.low_warning = true}));
  EXPECT_FALSE(t->lanes[1].rx_power_flags.Any());
  ASSERT_TRUE(t->thresholds.has_value());
  EXPECT_EQ(t->thresholds->temperature_celsius, (MonitorThresholds{75, -5, 70, 0}));
  EXPECT_NEAR(t->thresholds->supply_voltage_volts.high_alarm, 3.63, 1e-9);
  EXPECT_NEAR(t->thresholds->supply_voltage_volts.low_warning, 3.135, 1e-9);
  EXPECT_NEAR(t->thresholds->rx_power_watts.high_alarm, 3.4674e-3, kWattLsb / 2);
  EXPECT_NEAR(t->thresholds->rx_power_watts.low_alarm, 0.0407e-3, kWattLsb / 2);
  EXPECT_NEAR(t->thresholds->tx_bias_amperes.high_alarm, 12e-3, kAmpLsb / 2);
  EXPECT_NEAR(t->thresholds->tx_bias_amperes.low_warning, 3e-3, kAmpLsb / 2);
  EXPECT_NEAR(t->thresholds->tx_power_watts.low_alarm, 0.0813e-3, kWattLsb / 2);
  EXPECT_TRUE(t->rx_power_is_average);
  EXPECT_TRUE(t->data_ready);
}

// Distinct raw values in every lane slot and distinct flag nibbles: an offset or nibble mix-up
// moves a value to another lane or monitor and fails.
TEST(Sff8636, EveryLaneFieldAtItsOwnOffset) {
  ModulePages pages = MinimalQsfp28();
  PageWriter lower(pages.lower);
  for (uint16_t i = 0; i < 4; ++i) {
    lower.U16(34 + 2 * i, 1000 + i).U16(42 + 2 * i, 2000 + i).U16(50 + 2 * i, 3000 + i);
  }
  // byte 9: lane 1 high alarm | lane 2 low warning; byte 10: lane 3 low alarm | lane 4 high warn.
  lower.Byte(9, 0x81).Byte(10, 0x42).Byte(11, 0x20).Byte(12, 0x08).Byte(13, 0x01).Byte(14, 0x40);
  lower.Byte(6, 0x50).Byte(7, 0xa0);  // temperature LA+LW; Vcc HA+HW
  auto t = DecodeSff8636(pages);
  ASSERT_TRUE(t.ok()) << t.error().message;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(*t->lanes[i].rx_power_watts, static_cast<double>(1000 + i) * kWattLsb);
    EXPECT_DOUBLE_EQ(*t->lanes[i].tx_bias_amperes, static_cast<double>(2000 + i) * kAmpLsb);
    EXPECT_DOUBLE_EQ(*t->lanes[i].tx_power_watts, static_cast<double>(3000 + i) * kWattLsb);
  }
  EXPECT_EQ(t->lanes[0].rx_power_flags, (MonitorFlags{.high_alarm = true}));
  EXPECT_EQ(t->lanes[1].rx_power_flags, (MonitorFlags{.low_warning = true}));
  EXPECT_EQ(t->lanes[2].rx_power_flags, (MonitorFlags{.low_alarm = true}));
  EXPECT_EQ(t->lanes[3].rx_power_flags, (MonitorFlags{.high_warning = true}));
  EXPECT_EQ(t->lanes[0].tx_bias_flags, (MonitorFlags{.high_warning = true}));
  EXPECT_EQ(t->lanes[3].tx_bias_flags, (MonitorFlags{.high_alarm = true}));
  EXPECT_EQ(t->lanes[1].tx_power_flags, (MonitorFlags{.low_warning = true}));
  EXPECT_EQ(t->lanes[2].tx_power_flags, (MonitorFlags{.low_alarm = true}));
  EXPECT_FALSE(t->lanes[0].tx_power_flags.Any());
  EXPECT_EQ(t->temperature_flags, (MonitorFlags{.low_alarm = true, .low_warning = true}));
  EXPECT_EQ(t->supply_voltage_flags, (MonitorFlags{.high_alarm = true, .high_warning = true}));
}

TEST(Sff8636, SignedTemperatureAndThresholdOrder) {
  ModulePages pages = MinimalQsfp28();
  PageWriter(pages.lower).U16(22, 0xff00);  // -1 degC
  PageWriter(pages.upper[0x03]).U16(128, 0x4b00).U16(130, 0xfb00).U16(132, 0x4600).U16(134, 0x0080);
  auto t = DecodeSff8636(pages);
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(*t->temperature_celsius, -1.0);
  EXPECT_EQ(t->thresholds->temperature_celsius, (MonitorThresholds{75, -5, 70, 0.5}));
}

TEST(Sff8636, FlatMemoryAndOptionalMonitors) {
  ModulePages pages = MinimalQsfp28();
  pages.lower[2] = 0x05;                // Flat_mem + Data_Not_Ready
  pages.upper[0x00][220 - 128] = 0x00;  // OMA, no Tx power measurement
  EXPECT_TRUE(ModuleExtraPages(pages.lower).empty());
  auto t = DecodeSff8636(pages);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->flat_memory);
  EXPECT_FALSE(t->data_ready);
  EXPECT_FALSE(t->rx_power_is_average);
  EXPECT_FALSE(t->thresholds.has_value());  // page 03h ignored on a flat module
  EXPECT_FALSE(t->lanes[0].tx_power_watts.has_value());
  EXPECT_TRUE(t->lanes[0].rx_power_watts.has_value());
  pages.lower[2] = 0x00;
  EXPECT_EQ(ModuleExtraPages(pages.lower), std::vector<uint8_t>{0x03});
}

TEST(Sff8636, PageThreeMissingMeansNoThresholds) {
  ModulePages pages = MinimalQsfp28();
  pages.upper.erase(0x03);
  auto t = DecodeSff8636(pages);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->thresholds.has_value());
}

TEST(Sff8636, BadInputIsAClearError) {
  ModulePages pages = MinimalQsfp28();
  pages.lower.resize(127);
  auto short_lower = DecodeSff8636(pages);
  ASSERT_FALSE(short_lower.ok());
  EXPECT_EQ(short_lower.error().message, "SFF-8636: lower page is 127 bytes, expected 128");

  pages = MinimalQsfp28();
  pages.upper[0x00].resize(100);
  auto short_upper = DecodeSff8636(pages);
  ASSERT_FALSE(short_upper.ok());
  EXPECT_EQ(short_upper.error().message, "SFF-8636: upper page 00h missing or short");

  pages = MinimalQsfp28();
  pages.lower[0] = 0x03;  // SFP
  auto sfp = DecodeSff8636(pages);
  ASSERT_FALSE(sfp.ok());
  EXPECT_EQ(sfp.error().errnum, EMEDIUMTYPE);
  EXPECT_NE(sfp.error().message.find("0x03"), std::string::npos);
}

// Random EEPROM contents (a corrupt or half-written module) decode to finite numbers and
// printable strings, never NaN or control characters.
TEST(Sff8636, GarbageDecodesToFiniteValues) {
  std::mt19937 rng(8636);
  for (int round = 0; round < 500; ++round) {
    ModulePages pages;
    for (auto* page : {&pages.lower, &pages.upper[0x00], &pages.upper[0x03]}) {
      page->resize(kModuleHalfPage);
      for (auto& b : *page) b = static_cast<uint8_t>(rng());
    }
    pages.lower[0] = round % 2 ? 0x11 : 0x0d;
    auto t = DecodeSff8636(pages);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_TRUE(std::isfinite(*t->temperature_celsius) && std::isfinite(*t->supply_voltage_volts));
    for (const auto& lane : t->lanes) {
      for (const auto& v : {lane.rx_power_watts, lane.tx_power_watts, lane.tx_bias_amperes}) {
        if (v) {
          EXPECT_TRUE(std::isfinite(*v) && *v >= 0);
        }
      }
    }
    for (const std::string* s : {&t->vendor_name, &t->part_number, &t->serial_number}) {
      for (char c : *s) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << int(c);
    }
  }
}

}  // namespace
}  // namespace roceqos
