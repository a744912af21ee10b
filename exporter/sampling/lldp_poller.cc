#include "exporter/sampling/lldp_poller.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <ctime>
#include <set>

#include "base/log_event.h"
#include "collectors/lldp/liblldpctl.h"

namespace roceqos {
namespace {

constexpr std::string_view kMalformedTlv = "malformed_tlv";

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

LldpPoller::LldpPoller(LldpPollerOptions options, Netdevs netdevs, Query query)
    : options_(std::move(options)),
      netdevs_(std::move(netdevs)),
      query_(query ? std::move(query) : Query(lldp::QueryLldpd)),
      thread_(
          "roceqos-lldp", options_.interval, [this] { PollOnce(); },
          [this](const std::exception& e) {
            fault_log_.Fault("lldp poller", "exception", e.what(), spdlog::level::err);
          }) {
  for (const auto& reason : kLldpAbsenceNames)
    if (reason.value <= LldpAbsence::kLldpdError) errors_[std::string(reason.name)] = 0;
  errors_[std::string(kMalformedTlv)] = 0;
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
    NoteMalformed(*answer);
    state->view = std::move(*answer);
  } else {
    failure = LldpQueryFailure(answer.error());
    state->failure = *failure;
    state->failure_message = answer.error().message;
    ++errors_[std::string(LldpAbsenceName(*failure))];
  }
  NoteReachable(failure, failure ? state->failure_message : std::string());
  state->queries = queries_;
  state->errors = errors_;
  latest_.Store(std::move(state));
}

void LldpPoller::NoteMalformed(const lldp::LldpdView& view) {
  for (const auto& [netdev, port] : view.ports) {
    for (const lldp::Neighbor& neighbor : port.neighbors) {
      errors_[std::string(kMalformedTlv)] += neighbor.tlv_errors.size();
      const std::string key = "lldp tlv " + netdev;
      if (neighbor.tlv_errors.empty())
        fault_log_.Ok(key);
      else
        fault_log_.Fault(key, kMalformedTlv, neighbor.tlv_errors.front());
    }
  }
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
