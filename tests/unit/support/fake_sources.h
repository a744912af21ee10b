#pragma once

// Fakes for the sampler's sources. They behave like the kernel where it matters: vanished devices
// answer ENODEV, and every call advances a fake monotonic clock by a configurable cost so budget
// tests need no real time.

#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectors/ethtool.h"
#include "exporter/sampling/sampler.h"
#include "exporter/sampling/sources.h"

namespace roceqos::testing {

struct FakeClock {
  std::chrono::nanoseconds now{std::chrono::seconds(1000)};
  Sampler::Clock AsClock() {
    return [this] { return now; };
  }
};

inline Device MakeDevice(std::string name, int32_t ifindex, std::string driver = "mlx5_core") {
  Device d;
  d.name = std::move(name);
  d.ifindex = ifindex;
  d.driver = std::move(driver);
  d.oper_state = OperState::kUp;
  d.admin_up = true;
  d.carrier = true;
  d.pci_address = "0000:3b:00." + std::to_string(ifindex);
  d.pci_vendor = 0x15b3;
  d.role = DeviceRole::kPf;
  return d;
}

inline RdmaPort MakePort(std::string device, uint32_t port, std::string netdev) {
  RdmaPort p;
  p.device = std::move(device);
  p.port = port;
  p.port_state = 4;  // IB_PORT_ACTIVE
  p.phys_state = 5;
  p.netdev = std::move(netdev);
  p.protocol = "roce";
  return p;
}

class FakeInventory : public InventorySource {
 public:
  Result<Inventory> Discover() override {
    ++calls;
    if (clock) clock->now += cost;
    if (error) return *error;
    return inventory;
  }
  Inventory inventory;
  std::optional<Error> error;
  int calls = 0;
  FakeClock* clock = nullptr;
  std::chrono::nanoseconds cost{};
};

// `ethtool -S` of fake netdevs at the SIOCETHTOOL level (collectors/ethtool.h EthtoolIo); the
// sampler reads it through its EthtoolCollector. It answers like a kernel before the 2025 fix:
// GSTRINGS and GSTATS write the current set whatever count was asked, so a set of another size
// shows at the next GSTATS, one of the same size when the names are re-read.
class FakeEthtool : public EthtoolIo {
 public:
  struct Entry {
    std::shared_ptr<const std::vector<std::string>> names;
    std::vector<uint64_t> values;
    std::optional<Error> error;  // the answer to every call while set
  };

  void SetNames(const std::string& ifname, std::vector<std::string> names) {
    Entry& e = entries[ifname];
    e.names = std::make_shared<const std::vector<std::string>>(std::move(names));
    e.values.assign(e.names->size(), 0);
  }
  void SetValue(const std::string& ifname, const std::string& name, uint64_t value) {
    Entry& e = entries.at(ifname);
    for (size_t i = 0; i < e.names->size(); ++i) {
      if ((*e.names)[i] == name) e.values[i] = value;
    }
  }
  /// The device is gone: reads answer ENODEV like SIOCETHTOOL on a missing ifname.
  void Remove(const std::string& ifname) { entries.erase(ifname); }

  // ETHTOOL_GSSET_INFO
  Result<uint32_t> StatsCount(const std::string& ifname) override {
    Result<const Entry*> e = Find(ifname, "ETHTOOL_GSSET_INFO");
    if (!e.ok()) return e.error();
    return static_cast<uint32_t>((*e)->names->size());
  }
  // ETHTOOL_GSTRINGS
  Result<std::vector<std::string>> StatsNames(const std::string& ifname, uint32_t) override {
    events.push_back("names " + ifname);
    Result<const Entry*> e = Find(ifname, "ETHTOOL_GSTRINGS");
    if (!e.ok()) return e.error();
    return *(*e)->names;
  }
  // ETHTOOL_GSTATS: the one call per device per sample; `cost` is charged here.
  Result<std::vector<uint64_t>> StatsValues(const std::string& ifname, uint32_t) override {
    ++calls[ifname];
    events.push_back("sample " + ifname);
    if (clock) clock->now += cost;
    Result<const Entry*> e = Find(ifname, "ETHTOOL_GSTATS");
    if (!e.ok()) return e.error();
    return (*e)->values;
  }
  // ETHTOOL_GDRVINFO: the sampler never asks.
  Result<DriverInfo> GetDriverInfo(const std::string&) override { return DriverInfo{}; }

  std::map<std::string, Entry> entries;
  std::map<std::string, int> calls;  // ETHTOOL_GSTATS per netdev
  // "names <ifname>" (GSTRINGS) and "sample <ifname>" (GSTATS), in call order.
  std::vector<std::string> events;
  FakeClock* clock = nullptr;
  std::chrono::nanoseconds cost{};

 private:
  Result<const Entry*> Find(const std::string& ifname, const std::string& op) const {
    auto it = entries.find(ifname);
    if (it == entries.end()) return MakeError(ENODEV, op + " " + ifname + ": No such device");
    if (it->second.error) return *it->second.error;
    return &it->second;
  }
};

class FakeRdma : public RdmaCollector {
 public:
  Result<std::vector<RdmaPort>> ListPorts() override { return std::vector<RdmaPort>{}; }
  Result<CounterSet> ReadCounters(const RdmaPort& port) override {
    const std::string key = port.device + "/" + std::to_string(port.port);
    ++calls[key];
    if (clock) clock->now += cost;
    auto it = counters.find(key);
    if (it == counters.end()) return MakeError(ENODEV, "RDMA_NLDEV_CMD_STAT_GET " + key);
    return it->second;
  }
  std::map<std::string, CounterSet> counters;  // "mlx5_0/1" -> counters
  std::map<std::string, int> calls;
  FakeClock* clock = nullptr;
  std::chrono::nanoseconds cost{};
};

inline CounterSet MakeCounters(std::vector<std::string> names, std::vector<uint64_t> values) {
  return CounterSet{std::make_shared<const std::vector<std::string>>(std::move(names)),
                    std::move(values)};
}

}  // namespace roceqos::testing
