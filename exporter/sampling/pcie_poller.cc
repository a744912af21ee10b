#include "exporter/sampling/pcie_poller.h"

#include <spdlog/spdlog.h>

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

void PciePoller::PollOnce() {
  auto state = std::make_shared<PcieState>();
  state->interval_seconds = Seconds(options_.interval);
  const std::vector<std::string> netdevs = netdevs_ ? netdevs_() : std::vector<std::string>{};
  for (const std::string& netdev : std::set<std::string>(netdevs.begin(), netdevs.end())) {
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
  state->reads = reads_;
  state->errors = errors_;
  latest_.Store(std::move(state));
}

void PciePoller::Start() { thread_.Start(); }

void PciePoller::Stop() { thread_.Stop(); }

}  // namespace roceqos
