// Test driver for the transceiver collector (testbed scenario transceiver.sh): reads a netdev's
// module through ModuleEepromCollector, or decodes raw half pages dumped by
// `ethtool -m IF raw on page N offset O length 128`, and prints the decoded fields as key=value
// lines in ethtool -m's units and precision (mW %.4f, mA %.3f, degC %.2f, V %.4f).
//
//   transceiver_probe IFNAME          live read (needs CAP_NET_ADMIN)
//   transceiver_probe --ioctl IFNAME  live read through the ioctl fallback only
//   transceiver_probe --pages DIR     DIR/lower and DIR/<page hex> (00, 03, 01, 02, 11) raw files
//
// Exit status: 0 decoded, 1 error, 2 usage, 3 no module EEPROM on this device.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "collectors/transceiver/module_eeprom.h"

namespace {

using roceqos::ModulePages;
using roceqos::MonitorFlags;
using roceqos::MonitorThresholds;
using roceqos::Transceiver;

roceqos::Result<std::vector<uint8_t>> ReadRaw(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return roceqos::MakeError(ENOENT, "cannot open " + path.string());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

roceqos::Result<ModulePages> ReadPageDir(const std::string& dir) {
  ModulePages pages;
  auto lower = ReadRaw(std::filesystem::path(dir) / "lower");
  if (!lower) return lower.error();
  pages.lower = std::move(*lower);
  for (const char* name : {"00", "01", "02", "03", "11"}) {
    auto page = ReadRaw(std::filesystem::path(dir) / name);
    if (page) pages.upper[static_cast<uint8_t>(std::stoi(name, nullptr, 16))] = std::move(*page);
  }
  return pages;
}

void Flags(const std::string& prefix, const MonitorFlags& f) {
  std::printf("%s_high_alarm=%d\n%s_low_alarm=%d\n%s_high_warning=%d\n%s_low_warning=%d\n",
              prefix.c_str(), f.high_alarm, prefix.c_str(), f.low_alarm, prefix.c_str(),
              f.high_warning, prefix.c_str(), f.low_warning);
}

void Thresholds(const std::string& name, const MonitorThresholds& t, double scale,
                const char* format) {
  const std::pair<const char*, double> values[] = {{"high_alarm", t.high_alarm},
                                                   {"low_alarm", t.low_alarm},
                                                   {"high_warning", t.high_warning},
                                                   {"low_warning", t.low_warning}};
  for (const auto& [kind, value] : values) {
    std::printf("threshold_%s_%s=", name.c_str(), kind);
    std::printf(format, value * scale);
    std::printf("\n");
  }
}

void Print(const Transceiver& t) {
  std::printf("spec=%s\nidentifier=0x%02x\nmodule_type=%s\nspec_revision=%s\n",
              std::string(roceqos::ModuleSpecName(t.spec)).c_str(), t.identifier,
              t.module_type.c_str(), t.spec_revision.c_str());
  std::printf("vendor_name=%s\npart_number=%s\nserial_number=%s\nrevision=%s\n",
              t.vendor_name.c_str(), t.part_number.c_str(), t.serial_number.c_str(),
              t.revision.c_str());
  if (t.firmware_version) std::printf("firmware_version=%s\n", t.firmware_version->c_str());
  std::printf("data_ready=%d\nflat_memory=%d\n", t.data_ready, t.flat_memory);
  if (t.temperature_celsius) std::printf("temperature_c=%.2f\n", *t.temperature_celsius);
  if (t.supply_voltage_volts) std::printf("voltage_v=%.4f\n", *t.supply_voltage_volts);
  Flags("temperature", t.temperature_flags);
  Flags("voltage", t.supply_voltage_flags);
  std::printf("lanes=%zu\n", t.lanes.size());
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    const auto& lane = t.lanes[i];
    const std::string p = "lane" + std::to_string(i + 1);
    if (lane.rx_power_watts)
      std::printf("%s_rx_power_mw=%.4f\n", p.c_str(), *lane.rx_power_watts * 1e3);
    if (lane.tx_power_watts)
      std::printf("%s_tx_power_mw=%.4f\n", p.c_str(), *lane.tx_power_watts * 1e3);
    if (lane.tx_bias_amperes)
      std::printf("%s_tx_bias_ma=%.3f\n", p.c_str(), *lane.tx_bias_amperes * 1e3);
    Flags(p + "_rx_power", lane.rx_power_flags);
    Flags(p + "_tx_power", lane.tx_power_flags);
    Flags(p + "_tx_bias", lane.tx_bias_flags);
  }
  if (t.thresholds) {
    Thresholds("temperature_c", t.thresholds->temperature_celsius, 1, "%.2f");
    Thresholds("voltage_v", t.thresholds->supply_voltage_volts, 1, "%.4f");
    Thresholds("rx_power_mw", t.thresholds->rx_power_watts, 1e3, "%.4f");
    Thresholds("tx_power_mw", t.thresholds->tx_power_watts, 1e3, "%.4f");
    Thresholds("tx_bias_ma", t.thresholds->tx_bias_amperes, 1e3, "%.3f");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--pages") {
    auto pages = ReadPageDir(argv[2]);
    if (!pages) return std::fprintf(stderr, "%s\n", pages.error().message.c_str()), 1;
    auto decoded = roceqos::DecodeModule(*pages);
    if (!decoded) return std::fprintf(stderr, "%s\n", decoded.error().message.c_str()), 1;
    Print(*decoded);
    return 0;
  }
  const bool ioctl_only = argc == 3 && std::string_view(argv[1]) == "--ioctl";
  if ((argc != 2 && !ioctl_only) || argv[argc - 1][0] == '-') {
    std::fprintf(stderr,
                 "usage: transceiver_probe [--ioctl] IFNAME | transceiver_probe --pages DIR\n");
    return 2;
  }
  auto io = roceqos::MakeKernelModuleEepromIo(ioctl_only);
  roceqos::ModuleEepromCollector collector(*io);
  auto decoded = collector.Read(argv[argc - 1]);
  if (!decoded) {
    std::fprintf(stderr, "%s\n", decoded.error().message.c_str());
    return decoded.error().NotSupported() ? 3 : 1;
  }
  Print(*decoded);
  return 0;
}
