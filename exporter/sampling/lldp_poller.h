#pragma once

// The LLDP poller: its own thread asks lldpd (collectors/lldp/lldpd_client.h) about the selected
// netdevs once per --lldp.interval and publishes an immutable LldpState, which the sampler
// attaches to its snapshot like the transceiver poller's state. lldpd answers from memory over a
// Unix socket, but it is another process that may be slow or gone: that never reaches the
// counter sampler's thread.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/published.h"
#include "collectors/lldp/lldpd_client.h"
#include "collectors/roce_gids.h"
#include "exporter/core/fault_log.h"
#include "exporter/core/lldp_state.h"
#include "exporter/core/periodic_thread.h"

namespace roceqos {

struct LldpPollerOptions {
  std::chrono::nanoseconds interval = std::chrono::seconds(10);
  lldp::LldpdQuery query;
};

/// The reason a failed query gives every netdev (by the Error's errno).
LldpAbsence LldpQueryFailure(const Error& error);

class LldpPoller {
 public:
  /// The netdevs to ask about (the sampler's current selection); called on the poller thread.
  using Netdevs = std::function<std::vector<std::string>()>;
  using Query = std::function<Result<lldp::LldpdView>(const lldp::LldpdQuery&,
                                                      const std::vector<std::string>&)>;
  /// Whether the socket at a path that refused the connection was replaced by a restarted lldpd
  /// (collectors/lldp/control_socket.h).
  using SocketReplaced = std::function<bool(const std::string& socket_path)>;

  /// The RoCE GIDs of the given netdevs (collectors/roce_gids.h), by netdev; one left out is
  /// unknown. Called on the poller thread.
  using RoceGidReader =
      std::function<std::map<std::string, NetdevRoceGids>(const std::vector<std::string>& netdevs)>;

  /// `query` defaults to lldp::QueryLldpd, `socket_replaced` to lldp::SocketReplaced; tests pass
  /// their own.
  LldpPoller(LldpPollerOptions options, Netdevs netdevs, Query query = {},
             SocketReplaced socket_replaced = {});
  ~LldpPoller();
  LldpPoller(const LldpPoller&) = delete;
  LldpPoller& operator=(const LldpPoller&) = delete;

  /// Before Start(). Without a reader LldpState::roce_gids stays empty: GIDs unknown, and the
  /// frame-size check counts a VLAN tag.
  void SetRoceGidReader(RoceGidReader reader) { read_gids_ = std::move(reader); }

  /// Asks once and publishes. Not concurrently with itself or a running thread.
  void PollOnce();
  void Start();
  void Stop();

  /// The latest published state; null before the first round. Thread-safe, never blocks.
  std::shared_ptr<const LldpState> Latest() const { return latest_.Load(); }

 private:
  /// Logs when lldpd becomes unreachable (with the fix) and when it answers again: once per
  /// transition, not per round.
  void NoteReachable(const std::optional<LldpAbsence>& failure, const std::string& message);
  /// Counts each port's faults (an unreadable port, malformed TLVs, skipped APP entries) against
  /// that netdev and logs them once per transition.
  void NotePortFaults(const lldp::LldpdView& view, const std::vector<std::string>& netdevs);
  /// The reason of a failed round: LldpQueryFailure, or kLldpdSocketStale when the refused
  /// socket was replaced.
  LldpAbsence ClassifyFailure(const Error& error) const;
  void ReadRoceGids(LldpState& state) const;

  LldpPollerOptions options_;
  Netdevs netdevs_;
  Query query_;
  SocketReplaced socket_replaced_;
  RoceGidReader read_gids_;
  FaultLog fault_log_;
  uint64_t queries_ = 0;
  std::map<std::string, uint64_t> errors_;
  decltype(LldpState::port_errors) port_errors_;
  std::optional<LldpAbsence> last_failure_;
  Published<LldpState> latest_;
  PeriodicThread thread_;  // last: stopped before the members its rounds use are destroyed
};

}  // namespace roceqos
