#include "exporter/sampling/pcie_poller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <set>

#include "exporter/core/error_reason.h"
#include "exporter/sampling/source_call.h"

namespace roceqos {

PciePoller::PciePoller(PciePollerOptions options, Netdevs netdevs)
    : options_(std::move(options)),
      netdevs_(std::move(netdevs)),
      thread_(
          "roceqos-pcie", options_.interval, [this] { PollOnce(); },
          LogLostRound(fault_log_, "pcie poller")) {
  for (const auto& reason : kErrorReasonNames) errors_[std::string(reason.name)] = 0;
}

PciePoller::~PciePoller() { Stop(); }

namespace {

// --gpu-topology.nearest-only: per netdev, the pairs whose relation is that netdev's nearest.
GpuTopology KeepNearest(GpuTopology topology) {
  std::map<std::string, PcieRelation> best;
  for (const NicGpuRelation& pair : topology.pairs) {
    auto [it, inserted] = best.emplace(pair.netdev, pair.relation);
    if (!inserted) it->second = std::min(it->second, pair.relation);  // nearest first in the enum
  }
  std::erase_if(topology.pairs,
                [&](const NicGpuRelation& pair) { return pair.relation != best.at(pair.netdev); });
  return topology;
}

}  // namespace

std::shared_ptr<const GpuTopology> PciePoller::CurrentGpuTopology(
    const std::vector<std::string>& netdevs) {
  const uint64_t refresh_rounds =
      options_.interval.count() <= 0
          ? 1
          : std::max<uint64_t>(
                1, static_cast<uint64_t>(options_.gpu_topology_refresh / options_.interval));
  if (gpu_topology_ && netdevs == gpu_topology_netdevs_ && ++gpu_topology_age_ < refresh_rounds) {
    return gpu_topology_;
  }
  Result<GpuTopology> read =
      Guard<GpuTopology>([&] { return ReadGpuTopology(options_.sysfs_root, netdevs); });
  ++reads_;
  gpu_topology_netdevs_ = netdevs;
  gpu_topology_age_ = 0;
  if (!read) {
    CountFailedRead(read.error(), "gpu topology", errors_, fault_log_);
    gpu_topology_.reset();  // no stale pairs; read again next round
    return nullptr;
  }
  fault_log_.Ok("gpu topology");
  gpu_topology_ = std::make_shared<const GpuTopology>(
      options_.gpu_nearest_only ? KeepNearest(std::move(*read)) : std::move(*read));
  return gpu_topology_;
}

void PciePoller::PollOnce() {
  auto state = std::make_shared<PcieState>();
  state->interval_seconds = Seconds(options_.interval);
  const std::vector<std::string> listed = netdevs_ ? netdevs_() : std::vector<std::string>{};
  const std::set<std::string> unique(listed.begin(), listed.end());
  const std::vector<std::string> netdevs(unique.begin(), unique.end());
  for (const std::string& netdev : netdevs) {
    Result<std::optional<PcieLink>> read =
        Guard<std::optional<PcieLink>>([&] { return ReadPcieLink(options_.sysfs_root, netdev); });
    ++reads_;
    const std::string key = "pcie " + netdev;
    if (!read) {
      CountFailedRead(read.error(), key, errors_, fault_log_);
      continue;
    }
    fault_log_.Ok(key);
    if (*read) state->links.emplace(netdev, std::move(**read));  // nullopt: no PCI function
  }
  state->gpu_topology = CurrentGpuTopology(netdevs);
  state->reads = reads_;
  state->errors = errors_;
  latest_.Store(std::move(state));
}

void PciePoller::Start() { thread_.Start(); }

void PciePoller::Stop() { thread_.Stop(); }

}  // namespace roceqos
