#include "exporter/sampling/link_poller.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <set>

#include "exporter/core/error_reason.h"
#include "exporter/sampling/source_call.h"

namespace roceqos {

using std::chrono::nanoseconds;

LinkPoller::LinkPoller(LinkPollerOptions options, std::unique_ptr<LinkStatsIo> io, Netdevs netdevs,
                       BitCounts bit_counts, Clock clock)
    : options_(options),
      io_(std::move(io)),
      netdevs_(std::move(netdevs)),
      bit_counts_(std::move(bit_counts)),
      clock_(clock ? std::move(clock) : Clock(SteadyNow)),
      thread_(
          "roceqos-link", options_.interval, [this] { PollOnce(); },
          LogLostRound(fault_log_, "link poller")) {
  for (const auto& reason : kErrorReasonNames) errors_[std::string(reason.name)] = 0;
}

LinkPoller::~LinkPoller() { Stop(); }

std::optional<double> LinkPoller::PreFecBer(const std::string& netdev, const PhyBitCounts* now) {
  if (now == nullptr) {
    previous_bits_.erase(netdev);
    return std::nullopt;
  }
  auto [it, first] = previous_bits_.try_emplace(netdev, *now);
  const PhyBitCounts before = it->second;
  it->second = *now;
  // A counter that went back (driver reload, port reset) gives no window this round.
  if (first || now->received <= before.received || now->corrected < before.corrected) {
    return std::nullopt;
  }
  return static_cast<double>(now->corrected - before.corrected) /
         static_cast<double>(now->received - before.received);
}

void LinkPoller::PollOnce() {
  auto state = std::make_shared<LinkState>();
  state->interval_seconds = Seconds(options_.interval);
  const std::vector<std::string> netdevs = netdevs_ ? netdevs_() : std::vector<std::string>{};
  const std::map<std::string, PhyBitCounts> bits =
      bit_counts_ ? bit_counts_() : std::map<std::string, PhyBitCounts>{};
  const std::set<std::string> selected(netdevs.begin(), netdevs.end());
  std::erase_if(previous_bits_, [&](const auto& entry) { return !selected.contains(entry.first); });
  const nanoseconds round_start = clock_();
  for (const std::string& netdev : selected) {
    const nanoseconds start = clock_();
    Result<LinkNetlinkStats> read =
        Guard<LinkNetlinkStats>([&] { return ReadLinkNetlinkStats(*io_, netdev); });
    ++reads_;
    const std::string key = "link " + netdev;
    auto found = bits.find(netdev);
    const std::optional<double> ber =
        PreFecBer(netdev, found == bits.end() ? nullptr : &found->second);
    if (!read) {
      CountFailedRead(read.error(), key, errors_, fault_log_);
      continue;
    }
    fault_log_.Ok(key);
    state->links[netdev] = LinkReading{
        .netlink = std::move(*read), .pre_fec_ber = ber, .read_seconds = Seconds(clock_() - start)};
  }
  state->last_round_seconds = Seconds(clock_() - round_start);
  state->reads = reads_;
  state->errors = errors_;
  latest_.Store(std::move(state));
}

void LinkPoller::Start() { thread_.Start(); }

void LinkPoller::Stop() { thread_.Stop(); }

}  // namespace roceqos
