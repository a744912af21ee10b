#pragma once

// The immutable result of one sample. The sampler builds a new Snapshot per sample and publishes
// it as std::shared_ptr<const Snapshot>; /metrics renders the latest one and never reads the
// kernel. Large parts that do not change between samples (devices, name sets, name mappings) are
// shared between snapshots, so a sample copies values, not strings.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectors/device.h"
#include "collectors/ethtool_map.h"
#include "collectors/process_stats.h"
#include "exporter/core/attribution_state.h"
#include "exporter/core/derived_signals.h"
#include "exporter/core/error_reason.h"
#include "exporter/core/gid_state.h"
#include "exporter/core/link_state.h"
#include "exporter/core/lldp_state.h"
#include "exporter/core/pcie_state.h"
#include "exporter/core/qos_state.h"
#include "exporter/core/switch_comparison.h"
#include "exporter/core/transceiver_state.h"

namespace roceqos {

/// ETHTOOL_GSTATS of one netdev with the name mapping of its string-set generation.
struct EthtoolSample {
  CounterSet counters;  // names shared per generation, values of this sample
  /// MapMlx5EthtoolNames(*counters.names), computed once per generation.
  std::shared_ptr<const std::vector<MappedCounter>> mapped;
  /// Indices of unmapped names matching --collector.ethtool.raw-include (empty without the flag).
  std::shared_ptr<const std::vector<uint32_t>> raw_indices;
  uint64_t string_set_changes = 0;  // generations seen after the first
  /// Monotonic midpoint of the ETHTOOL_GSTATS call (0 = unknown): the derivation's Δt is taken
  /// between reads, so a late sampler wake-up does not skew a device's rates and ratios.
  std::chrono::nanoseconds read_at{0};
  /// MapMlx5LinkNames(*counters.names), computed once per generation: the link figures' fallback.
  std::shared_ptr<const LinkEthtoolNames> link_names = nullptr;
};

/// RDMA_NLDEV_CMD_STAT_GET of one port.
struct RdmaPortSample {
  RdmaPort port;
  CounterSet counters;
  /// Monotonic time after the read (0 = unknown). A port not due is carried forward with its read
  /// time: the derivation tells a new read from a carried one by it (ecn_pairing.h).
  std::chrono::nanoseconds read_at{0};
};

struct DeviceSnapshot {
  std::shared_ptr<const Device> device;  // from the last discovery; shared between samples
  std::optional<EthtoolSample> ethtool;  // absent when the device has no stats or the read failed
  std::vector<RdmaPortSample> rdma;      // ports bound to this netdev that were read

  std::shared_ptr<const QosDeviceState> qos;            // filled by the QoS stage, if any
  std::shared_ptr<const DerivedDeviceSignals> derived;  // filled by the signals stage, if any
  /// The host against its LLDP neighbour, filled when Snapshot::lldp is attached; null without
  /// the QoS state or a neighbour.
  std::shared_ptr<const SwitchComparison> switch_comparison;
};

/// Per-source bookkeeping for self-metrics.
struct SourceStatus {
  double last_duration_seconds = 0;  // wall time of the source's last run
  bool available = true;
};

struct SamplerStatus {
  double configured_period_seconds = 0;
  double effective_period_seconds = 0;
  double budget_ratio = 0;
  double last_kernel_seconds = 0;
  uint64_t overruns = 0;
  uint64_t samples = 0;
  /// Time inside device kernel calls per second over the last 10 s (statistics reads, DCB
  /// queries; exporter/sampling/port_scheduler.h).
  double kernel_duty_cycle = 0;
  /// The last discovery could not list RDMA ports and kept the previous list (kRdmaPortsKeep).
  bool rdma_ports_stale = false;
};

struct Snapshot {
  uint64_t sequence = 0;  // 1 for the first published sample
  std::chrono::system_clock::time_point taken_at{};
  /// The same instant on the monotonic clock: how old the snapshot is (/-/healthy) must not jump
  /// with the wall clock (an NTP step would fail a live exporter, or hide a stuck one).
  std::chrono::steady_clock::time_point taken_at_steady{};
  std::vector<DeviceSnapshot> devices;          // selected devices, sorted by netdev name
  std::map<std::string, SourceStatus> sources;  // "discovery", "ethtool", "rdma", stage sources
  /// (source, reason) -> failures since start.
  std::map<CollectErrorKey, uint64_t> errors;
  SamplerStatus sampler;

  std::shared_ptr<const QosGlobalState> qos;  // filled by the QoS stage, if any
  /// The transceiver poller's latest state (its own thread and cadence), attached as published;
  /// null with --transceiver.interval=0 and before its first round. Rendered only for `devices`.
  std::shared_ptr<const TransceiverState> transceivers;
  /// The LLDP poller's latest state, attached the same way; null with --lldp.interval=0 and
  /// before its first round. Rendered only for `devices`.
  std::shared_ptr<const LldpState> lldp;
  /// The exporter's own process_* figures, read by the process stage (exporter/sampling/
  /// process_stage.h) on the sampler thread; absent before its first good read.
  std::optional<ProcessStats> process;
  /// The link poller's latest state, attached like the transceivers'; null with
  /// --link.interval=0 and before its first round. Rendered only for `devices`.
  std::shared_ptr<const LinkState> links;
  /// The PCIe poller's latest state, attached as the transceiver state is; null with
  /// --pcie.interval=0 and before its first round. Rendered only for `devices`.
  std::shared_ptr<const PcieState> pcie;
  /// The RoCE v2 GID check's latest round (exporter/sampling/gid_stage.h), carried between its
  /// rounds; null with --gids.interval=0, before its first round and after a failed dump.
  /// Rendered only for `devices`.
  std::shared_ptr<const GidState> gids;
  /// The attribution poller's latest state (QPs per owner per netdev), attached like the PCIe
  /// state; null with --attribution.interval=0 and before its first round. Rendered only for
  /// `devices`.
  std::shared_ptr<const AttributionState> attribution;

  const DeviceSnapshot* FindDevice(std::string_view netdev) const {
    for (const DeviceSnapshot& d : devices) {
      if (d.device && d.device->name == netdev) return &d;
    }
    return nullptr;
  }
};

}  // namespace roceqos
