#include "exporter/sampling/lldp_poller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <set>
#include <utility>

#include "base/log_event.h"
#include "collectors/lldp/control_socket.h"
#include "collectors/lldp/liblldpctl.h"

namespace roceqos {
namespace {

std::string_view FixFor(LldpAbsence failure) {
  switch (failure) {
    case LldpAbsence::kLldpdNotInstalled:
      return "install lldpd (apt-get install lldpd), or --lldp.interval=0 to stop asking";
    case LldpAbsence::kPermissionDenied:
      return "add the exporter to group _lldpd (systemd: "
             "deploy/systemd/roce-qos-exporter.service.d/"
             "lldp.conf; Kubernetes: deploy/kubernetes/components/lldp)";
    case LldpAbsence::kLldpdNotRunning:
      return "start lldpd (systemctl enable --now lldpd) or point --lldp.socket at its socket";
    case LldpAbsence::kLldpdSocketStale:
      return "restart the exporter, so that it mounts lldpd's new socket (Kubernetes: "
             "components/lldp sets --lldp.unhealthy-on-stale-socket, so the liveness probe "
             "does)";
    case LldpAbsence::kLldpdIncompatible:
      return "give the exporter the host lldpd's own liblldpctl (--lldp.library), or run the "
             "lldpd release the exporter's library comes from (docs/runbooks/"
             "RoceQosLldpdIncompatible.md)";
    default:
      return "check lldpd (lldpcli show neighbors)";
  }
}

}  // namespace

LldpAbsence LldpQueryFailure(const Error& error) {
  switch (error.errnum) {
    case ELIBACC:
      return LldpAbsence::kLldpdNotInstalled;
    case ENOENT:
    case ECONNREFUSED:
    case ENOTDIR:
      return LldpAbsence::kLldpdNotRunning;
    case EACCES:
    case EPERM:
      return LldpAbsence::kPermissionDenied;
    case EPROTO:
      return LldpAbsence::kLldpdIncompatible;
    default:
      return LldpAbsence::kLldpdError;
  }
}

LldpPoller::LldpPoller(LldpPollerOptions options, Netdevs netdevs, Query query,
                       SocketReplaced socket_replaced)
    : options_(std::move(options)),
      netdevs_(std::move(netdevs)),
      query_(query ? std::move(query) : Query(lldp::QueryLldpd)),
      socket_replaced_(socket_replaced ? std::move(socket_replaced)
                                       : SocketReplaced([](const std::string& path) {
                                           return lldp::SocketReplaced(path);
                                         })),
      thread_(
          "roceqos-lldp", options_.interval, [this] { PollOnce(); },
          LogLostRound(fault_log_, "lldp poller")) {
  for (const auto& reason : kLldpAbsenceNames)
    if (reason.value <= LldpAbsence::kLldpdError) errors_[std::string(reason.name)] = 0;
  errors_[std::string(kLldpMalformedTlv)] = 0;
}

LldpPoller::~LldpPoller() { Stop(); }

void LldpPoller::Start() { thread_.Start(); }
void LldpPoller::Stop() { thread_.Stop(); }

void LldpPoller::PollOnce() {
  auto state = std::make_shared<LldpState>();
  state->interval_seconds = std::chrono::duration<double>(options_.interval).count();
  std::vector<std::string> netdevs = netdevs_ ? netdevs_() : std::vector<std::string>{};
  Result<lldp::LldpdView> answer = query_(options_.query, netdevs);
  state->read_at_unix = std::time(nullptr);
  state->library = lldp::LoadedLldpctlFile();
  ++queries_;
  std::optional<LldpAbsence> failure;
  if (answer) {
    NotePortFaults(*answer, netdevs);
    state->view = std::move(*answer);
    ReadRoceGids(*state);
  } else {
    failure = ClassifyFailure(answer.error());
    state->failure = *failure;
    state->failure_message = answer.error().message;
    ++errors_[std::string(LldpAbsenceName(*failure))];
  }
  NoteReachable(failure, failure ? state->failure_message : std::string());
  state->queries = queries_;
  state->errors = errors_;
  state->port_errors = port_errors_;
  latest_.Store(std::move(state));
}

LldpAbsence LldpPoller::ClassifyFailure(const Error& error) const {
  const LldpAbsence failure = LldpQueryFailure(error);
  // Only a refused connect can be a replaced socket: ENOENT means the path itself is gone.
  if (error.errnum != ECONNREFUSED) return failure;
  const std::string& path =
      options_.query.socket_path.empty() ? lldp::DefaultLldpdSocket() : options_.query.socket_path;
  return socket_replaced_(path) ? LldpAbsence::kLldpdSocketStale : failure;
}

namespace {

size_t SkippedAppEntries(const lldp::Neighbor& neighbor) {
  const auto& app = neighbor.dcbx.application_priority;
  return app ? app->skipped.size() : 0;
}

// The first fault of the port's answer, for the log; empty when it has none.
std::pair<std::string_view, std::string> FirstPortFault(const lldp::LocalPort& port) {
  if (!port.error.empty()) return {kLldpPortUnreadable, port.error};
  for (const lldp::Neighbor& neighbor : port.neighbors) {
    if (!neighbor.tlv_errors.empty()) return {kLldpMalformedTlv, neighbor.tlv_errors.front()};
    if (SkippedAppEntries(neighbor) != 0)
      return {kLldpMalformedAppEntry, neighbor.dcbx.application_priority->skipped.front()};
  }
  return {};
}

}  // namespace

void LldpPoller::NotePortFaults(const lldp::LldpdView& view,
                                const std::vector<std::string>& netdevs) {
  // A netdev that left the selection takes its counts with it (no stale series, bounded memory).
  std::erase_if(port_errors_, [&](const auto& entry) {
    return std::find(netdevs.begin(), netdevs.end(), entry.first) == netdevs.end();
  });
  for (const auto& [netdev, port] : view.ports) {
    auto& counts = port_errors_[netdev];
    for (std::string_view reason : kLldpPortErrorReasons) counts.try_emplace(std::string(reason));
    counts[std::string(kLldpPortUnreadable)] += port.error.empty() ? 0 : 1;
    for (const lldp::Neighbor& neighbor : port.neighbors) {
      counts[std::string(kLldpMalformedTlv)] += neighbor.tlv_errors.size();
      errors_[std::string(kLldpMalformedTlv)] += neighbor.tlv_errors.size();
      counts[std::string(kLldpMalformedAppEntry)] += SkippedAppEntries(neighbor);
    }
    const std::string key = "lldp port " + netdev;
    const auto [reason, message] = FirstPortFault(port);
    if (reason.empty())
      fault_log_.Ok(key);
    else
      fault_log_.Fault(key, reason, message);
  }
}

// The GID table is read here, not at discovery or in the sample: it matters only against a
// neighbour's Maximum Frame Size, so only those netdevs are read, once per --lldp.interval, on
// this thread (sysfs reads, one per table entry, never charged to the counter sampler's budget).
void LldpPoller::ReadRoceGids(LldpState& state) const {
  if (!read_gids_ || !state.view) return;
  std::vector<std::string> netdevs;
  for (const auto& [netdev, port] : state.view->ports) {
    if (std::any_of(port.neighbors.begin(), port.neighbors.end(),
                    [](const lldp::Neighbor& n) { return n.max_frame_size.has_value(); }))
      netdevs.push_back(netdev);
  }
  if (!netdevs.empty()) state.roce_gids = read_gids_(netdevs);
}

void LldpPoller::NoteReachable(const std::optional<LldpAbsence>& failure,
                               const std::string& message) {
  if (failure == last_failure_) return;
  last_failure_ = failure;
  if (!failure) {
    LogEvent(spdlog::level::info, "lldpd answers", {});
    return;
  }
  // Without lldpd the LLDP metrics say only "absent"; one line names the cause and the fix. A node
  // without lldpd is a normal node (info); lldpd there but unreadable is a fault to fix (warn).
  const bool normal =
      *failure == LldpAbsence::kLldpdNotInstalled || *failure == LldpAbsence::kLldpdNotRunning;
  LogEvent(normal ? spdlog::level::info : spdlog::level::warn, "lldpd not readable",
           {{"reason", LldpAbsenceName(*failure)}, {"error", message}, {"fix", FixFor(*failure)}});
}

}  // namespace roceqos
