#pragma once

// Fakes for the sampler's sources. They behave like the kernel collectors where it matters: the
// ethtool names pointer stays the same object until the string set changes, vanished devices
// answer ENODEV, and every call advances a fake monotonic clock by a configurable cost so budget
// tests need no real time.

#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

class FakeEthtool : public NetdevStatsSource {
 public:
  struct Entry {
    std::shared_ptr<const std::vector<std::string>> names;
    std::vector<uint64_t> values;
    std::optional<Error> error;
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

  Result<CounterSet> Sample(const std::string& ifname) override {
    ++calls[ifname];
    events.push_back("sample " + ifname);
    if (clock) clock->now += cost;
    auto it = entries.find(ifname);
    if (it == entries.end())
      return MakeError(ENODEV, "ETHTOOL_GSTATS " + ifname + ": No such device");
    if (it->second.error) return *it->second.error;
    return CounterSet{it->second.names, it->second.values};
  }
  void Forget(const std::string& ifname) override { forgotten.push_back(ifname); }
  void Invalidate(const std::string& ifname) override { events.push_back("invalidate " + ifname); }

  std::map<std::string, Entry> entries;
  std::map<std::string, int> calls;
  std::vector<std::string> events;  // "sample <ifname>" and "invalidate <ifname>", in call order
  std::vector<std::string> forgotten;
  FakeClock* clock = nullptr;
  std::chrono::nanoseconds cost{};
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
