#include "exporter/sampling/transceiver_poller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <exception>
#include <set>

#include "base/log_event.h"
#include "exporter/sampling/source_call.h"

namespace roceqos {
namespace {

using std::chrono::nanoseconds;

// A netdev without a pluggable module EEPROM (veth, virtio, a copper NIC: EOPNOTSUPP) or with a
// module neither decoder manages (SFP, an unprogrammed identifier: EMEDIUMTYPE) has no
// transceiver; that is absence, not a failed read.
bool Absent(const Error& error) { return error.NotSupported() || error.errnum == EMEDIUMTYPE; }

}  // namespace

TransceiverPoller::TransceiverPoller(TransceiverPollerOptions options,
                                     std::unique_ptr<ModuleEepromIo> io, Netdevs netdevs,
                                     Clock clock)
    : options_(options),
      io_(std::move(io)),
      collector_(*io_),
      netdevs_(std::move(netdevs)),
      clock_(clock ? std::move(clock) : Clock(SteadyNow)),
      thread_(
          "roceqos-xcvr", options_.interval, [this] { PollOnce(); },
          LogLostRound(fault_log_, "transceiver poller")) {
  for (const auto& reason : kErrorReasonNames) errors_[std::string(reason.name)] = 0;
}

TransceiverPoller::~TransceiverPoller() { Stop(); }

void TransceiverPoller::PollOnce() {
  auto state = std::make_shared<TransceiverState>();
  state->interval_seconds = Seconds(options_.interval);
  state->serial_numbers = options_.serial_numbers;
  const std::vector<std::string> netdevs = netdevs_ ? netdevs_() : std::vector<std::string>{};
  const nanoseconds round_start = clock_();
  bool permission_denied = false;
  for (const std::string& netdev : std::set<std::string>(netdevs.begin(), netdevs.end())) {
    const nanoseconds start = clock_();
    ModuleAccess access;
    Result<Transceiver> read = Guard<Transceiver>([&] { return collector_.Read(netdev, &access); });
    const double spent = Seconds(clock_() - start);
    ++reads_;
    const std::string key = "transceiver " + netdev;
    if (read) {
      fault_log_.Ok(key);
      NoteAccess(netdev, access);
      state->modules[netdev] = TransceiverReading{
          .module = std::move(*read), .read_seconds = spent, .access = std::move(access)};
    } else if (Absent(read.error())) {
      fault_log_.Ok(key);
    } else {
      if (CountFailedRead(read.error(), key, errors_, fault_log_) == ErrorReason::kPermission)
        permission_denied = true;
    }
  }
  state->last_round_seconds = Seconds(clock_() - round_start);
  state->reads = reads_;
  state->errors = errors_;
  state->permission_denied = permission_denied;
  NotePermission(permission_denied);
  latest_.Store(std::move(state));
}

void TransceiverPoller::NoteAccess(const std::string& netdev, const ModuleAccess& access) {
  if (access.method != ModuleAccessMethod::kIoctl) {
    fallback_logged_.erase(netdev);
    return;
  }
  const std::string unread = FormatModulePages(access.unread_pages);
  auto [it, inserted] = fallback_logged_.try_emplace(netdev, unread);
  if (!inserted && it->second == unread) return;
  it->second = unread;
  // A kernel without ETHTOOL_MSG_MODULE_EEPROM_GET (before 5.13): the ioctl's flat image has
  // SFF-8636 pages 00h-03h but only page 00h of a CMIS module, so its lane monitors, flags and
  // thresholds are missing; the series roce_exporter_transceiver_access_info says the same.
  LogEvent(spdlog::level::warn, "transceiver via ioctl",
           {{"netdev", netdev},
            {"reason", access.fallback_reason},
            {"unread_pages", unread.empty() ? "none" : unread}});
}

void TransceiverPoller::NotePermission(bool denied) {
  if (denied == permission_denied_) return;
  permission_denied_ = denied;
  if (!denied) {
    LogEvent(spdlog::level::info, "transceiver reads permitted", {});
    return;
  }
  // Observe mode runs without CAP_NET_ADMIN, which module EEPROM reads need (docs/transceiver.md):
  // without this line the optics metrics are silently empty while the poller keeps trying.
  LogEvent(spdlog::level::warn, "transceiver reads refused for permission",
           {{"needs", "CAP_NET_ADMIN"},
            {"fix",
             "systemd: deploy/systemd/roce-qos-exporter.service.d/optics.conf; Kubernetes: "
             "deploy/kubernetes/components/optics; or --transceiver.interval=0 to turn the "
             "poller off"}});
}

void TransceiverPoller::Start() { thread_.Start(); }

void TransceiverPoller::Stop() { thread_.Stop(); }

std::unique_ptr<ModuleEepromIo> MakeKernelTransceiverIo() { return MakeKernelModuleEepromIo(); }

}  // namespace roceqos
