#pragma once

// The PCIe poller: its own thread reads the PCIe link (speed, width, AER totals) of every
// selected netdev's PCI function and upstream port from sysfs once per --pcie.interval and
// publishes an immutable PcieState. sysfs only (each file is a config-space read or a copy of the
// kernel's AER statistics, no firmware command), but a link's speed and its AER totals change on
// a scale of minutes, not of the counter sampler's period, so it does not run on that thread:
// the sampler only attaches the latest state to its snapshot, as the transceiver poller's.
//
// The same thread reads the GPU topology (collectors/gpu_topology.h, docs/gpus.md): which NVIDIA
// GPUs sit how near each selected netdev on the PCIe tree. It changes only on hotplug or a driver
// rebind, and a read lists every PCI function of the host, so it is not read every round: when the
// selection changes, after a failed read, and every `gpu_topology_refresh` (10 minutes) otherwise.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/published.h"
#include "base/result.h"
#include "collectors/pcie_link.h"
#include "exporter/core/fault_log.h"
#include "exporter/core/pcie_state.h"
#include "exporter/core/periodic_thread.h"

namespace roceqos {

struct PciePollerOptions {
  std::chrono::nanoseconds interval = std::chrono::seconds(30);
  std::string sysfs_root = "/sys";
  /// The longest a GPU topology is kept before it is read again with an unchanged selection: a
  /// GPU hot-added or rebound shows within it. Counted in rounds (at least 1).
  std::chrono::nanoseconds gpu_topology_refresh = std::chrono::minutes(10);
  /// --gpu-topology.nearest-only: keep, per netdev, only the GPUs at its best relation.
  bool gpu_nearest_only = false;
};

class PciePoller {
 public:
  /// The netdevs to read (the sampler's current selection); called on the poller thread.
  using Netdevs = std::function<std::vector<std::string>()>;

  PciePoller(PciePollerOptions options, Netdevs netdevs);
  ~PciePoller();
  PciePoller(const PciePoller&) = delete;
  PciePoller& operator=(const PciePoller&) = delete;

  /// Reads every netdev once and publishes. Not concurrently with itself or a running thread.
  void PollOnce();

  /// Starts the thread (first round immediately, then every interval); Stop() joins. Idempotent.
  void Start();
  void Stop();

  /// The latest published state; null before the first round. Thread-safe, never blocks.
  std::shared_ptr<const PcieState> Latest() const { return latest_.Load(); }

 private:
  PciePollerOptions options_;
  Netdevs netdevs_;
  /// The current topology, or null to read it this round (the first, or after a failure).
  std::shared_ptr<const GpuTopology> CurrentGpuTopology(const std::vector<std::string>& netdevs);

  FaultLog fault_log_;
  uint64_t reads_ = 0;
  std::shared_ptr<const GpuTopology> gpu_topology_;  // null: none read yet, or the last one failed
  std::vector<std::string> gpu_topology_netdevs_;    // the sorted selection it was read for
  uint64_t gpu_topology_age_ = 0;                    // rounds since it was read
  std::map<std::string, uint64_t> errors_;
  Published<PcieState> latest_;
  PeriodicThread thread_;  // last: stopped before the members its rounds use are destroyed
};

}  // namespace roceqos
