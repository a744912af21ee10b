#pragma once

// The write gate's facts for tests that are about something else: every device is where it was
// planned ("netdev:<name>" resolves to <name>, "pci:<address>" through `netdevs`), its storm
// evidence is fresh and clear, and the lock is held. Tests of the gate itself change a field.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exporter/qos/write_gate.h"

namespace roceqos::testing {

class FakeWriteFacts : public StormWitness, public DeviceResolver, public LockWitness {
 public:
  StormGuard storm = StormGuard::kClear;
  /// The newest read's time; unset: one never older than the gate's now.
  std::optional<std::chrono::steady_clock::time_point> read_at;
  std::map<std::string, std::string> netdevs;               // "pci:<address>" -> its netdev now
  std::map<std::string, std::vector<std::string>> rdma_of;  // identity -> its RDMA devices now
  bool lock_held = true;

  StormFacts Witness(const std::string&, std::chrono::nanoseconds) override {
    return {storm, read_at.value_or(std::chrono::steady_clock::time_point::max())};
  }
  std::optional<ResolvedDevice> Resolve(const std::string& identity) override {
    std::optional<ResolvedDevice> resolved;
    if (auto it = netdevs.find(identity); it != netdevs.end()) {
      resolved = ResolvedDevice{it->second, 0, {}};
    } else if (identity.starts_with("netdev:")) {
      resolved = ResolvedDevice{identity.substr(7), 0, {}};
    }
    if (auto it = rdma_of.find(identity); resolved && it != rdma_of.end())
      resolved->rdma_devices = it->second;
    return resolved;
  }
  bool StillHeld() override { return lock_held; }
  WriteFacts Facts() { return {this, this, this}; }
};

}  // namespace roceqos::testing
