#include "exporter/qos/remediate.h"

#include <fmt/format.h>
#include <linux/capability.h>
#include <linux/dcbnl.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace roceqos {
namespace {

std::string AppsText(const std::vector<DcbApp>& apps) {
  std::string out;
  for (const auto& a : apps)
    out += fmt::format("{}{}:{}", out.empty() ? "" : " ", a.protocol, a.priority);
  return out.empty() ? "none" : out;
}

bool Drifted(const DeviceDrift& drift, QosField field) {
  const FieldVerdict* v = drift.Find(field);
  return v != nullptr && v->status == FieldStatus::kDrift;
}

// ETS as the kernel accepts it: bandwidth only on ETS TCs (dcbnl_ieee_set rejects others).
EtsState SanitizedEts(EtsState ets) {
  for (int tc = 0; tc < kNumTcs; ++tc)
    if (ets.tc_tsa[tc] != IEEE_8021QAZ_TSA_ETS) ets.tc_tx_bw[tc] = 0;
  return ets;
}

DcbApp DscpApp(uint8_t dscp, uint8_t prio) { return DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, prio, dscp}; }

}  // namespace

Result<RemediationMode> ParseRemediationMode(std::string_view text) {
  if (text == "off") return RemediationMode::kOff;
  if (text == "dry-run") return RemediationMode::kDryRun;
  if (text == "enforce") return RemediationMode::kEnforce;
  return MakeError(EINVAL,
                   fmt::format("--remediation: \"{}\" is not one of off, dry-run, enforce", text));
}

std::string_view RemediationModeName(RemediationMode mode) {
  switch (mode) {
    case RemediationMode::kOff:
      return "off";
    case RemediationMode::kDryRun:
      return "dry-run";
    case RemediationMode::kEnforce:
      return "enforce";
  }
  return "off";
}

std::string_view RemediationStateName(RemediationState state) {
  switch (state) {
    case RemediationState::kInSync:
      return "in_sync";
    case RemediationState::kActed:
      return "acted";
    case RemediationState::kBackoff:
      return "backoff";
    case RemediationState::kGaveUp:
      return "gave_up";
    case RemediationState::kDryRun:
      return "dry_run";
    case RemediationState::kObserveOnly:
      return "observe_only";
    case RemediationState::kBlockedNotPf:
      return "blocked_not_pf";
    case RemediationState::kBlockedBond:
      return "blocked_bond";
    case RemediationState::kBlockedDown:
      return "blocked_down";
    case RemediationState::kBlockedDriverNotReady:
      return "blocked_driver_not_ready";
    case RemediationState::kBlockedStorm:
      return "blocked_storm";
  }
  return "unknown";
}

std::optional<RemediationState> CheckGuardrails(const DeviceContext& context) {
  // Bond first: a bond member is also a PF, and the LAG device name is the stronger signal.
  if (context.role == DeviceRole::kBondMember || context.role == DeviceRole::kBond)
    return RemediationState::kBlockedBond;
  for (const auto& rdma : context.rdma_devices)
    if (rdma.rfind("mlx5_bond_", 0) == 0) return RemediationState::kBlockedBond;
  if (context.role != DeviceRole::kPf) return RemediationState::kBlockedNotPf;
  if (!context.oper_up) return RemediationState::kBlockedDown;
  if (!context.driver_ready) return RemediationState::kBlockedDriverNotReady;
  if (context.pfc_storm) return RemediationState::kBlockedStorm;
  return std::nullopt;
}

std::vector<RemediationAction> PlanRemediation(const QosPolicy& policy, const ObservedQos& observed,
                                               const DeviceDrift& drift) {
  std::vector<RemediationAction> plan;
  const bool dcb_ok = observed.dcb.ok();
  const QosState* state = dcb_ok ? &observed.dcb.value : nullptr;

  // ETS and prio_tc travel in one struct ieee_ets: one write covers both fields.
  const bool prio_tc_drift = Drifted(drift, QosField::kPrioTc);
  const bool ets_drift = Drifted(drift, QosField::kEts);
  if (dcb_ok && state->ets && (prio_tc_drift || ets_drift)) {
    EtsState want = state->ets.value();
    if (policy.prio_tc) want.prio_tc = *policy.prio_tc;
    if (policy.ets) {
      want.tc_tsa = policy.ets->tsa;
      want.tc_tx_bw = policy.ets->bandwidth;
    }
    RemediationAction a;
    a.field = ets_drift ? QosField::kEts : QosField::kPrioTc;
    a.kind = RemediationAction::Kind::kDcbSet;
    a.dcb.ets = SanitizedEts(want);
    a.old_value = fmt::format("prio_tc {} tsa/bw {}/{}", ArrayText(state->ets->prio_tc),
                              ArrayText(state->ets->tc_tsa), ArrayText(state->ets->tc_tx_bw));
    a.new_value = fmt::format("prio_tc {} tsa/bw {}/{}", ArrayText(want.prio_tc),
                              ArrayText(want.tc_tsa), ArrayText(a.dcb.ets->tc_tx_bw));
    plan.push_back(std::move(a));
  }

  if (dcb_ok && state->pfc && Drifted(drift, QosField::kPfc) && policy.pfc) {
    RemediationAction a;
    a.field = QosField::kPfc;
    a.kind = RemediationAction::Kind::kDcbSet;
    PfcState want = *state->pfc;  // keep cap, mbc and the cable length (delay)
    want.enabled_mask = *policy.pfc;
    a.dcb.pfc = want;
    a.old_value = PriorityListText(state->pfc->enabled_mask);
    a.new_value = PriorityListText(want.enabled_mask);
    a.side_effect =
        "the link flaps on mlx5 (mlx5_toggle_port_link) and port buffers may be resized";
    plan.push_back(std::move(a));
  }

  if (dcb_ok && state->buffer && Drifted(drift, QosField::kBuffer) && policy.buffer) {
    RemediationAction a;
    a.field = QosField::kBuffer;
    a.kind = RemediationAction::Kind::kDcbSet;
    BufferState want = *state->buffer;
    want.prio_buffer = policy.buffer->prio_buffer;
    if (policy.buffer->size) want.size = *policy.buffer->size;
    a.dcb.buffer = want;
    a.old_value = fmt::format("prio_buffer {} size {}", ArrayText(state->buffer->prio_buffer),
                              ArrayText(state->buffer->size));
    a.new_value =
        fmt::format("prio_buffer {} size {}", ArrayText(want.prio_buffer), ArrayText(want.size));
    plan.push_back(std::move(a));
  }

  // DSCP APP entries: trust follows them on mlx5 (first entry -> DSCP trust, last removed -> PCP).
  if (dcb_ok) {
    std::vector<DcbApp> add, remove;
    QosField field = QosField::kDscpPrio;
    std::string side_effect;
    if (Drifted(drift, QosField::kTrust) && policy.trust == TrustMode::kPcp) {
      field = QosField::kTrust;
      for (const auto& app : state->apps)
        if (app.selector == IEEE_8021QAZ_APP_SEL_DSCP) remove.push_back(app);
      side_effect = "trust changes to pcp; mlx5 may restart its channels";
    } else if (Drifted(drift, QosField::kTrust) && policy.trust == TrustMode::kDscp) {
      // As `mlnx_qos --trust dscp`: the default 64-entry map (DSCP d -> priority d/8), with the
      // policy's entries in place of the defaults.
      field = QosField::kTrust;
      for (uint8_t dscp = 0; dscp < kNumDscp; ++dscp) {
        uint8_t prio = static_cast<uint8_t>(dscp >> 3);
        if (policy.dscp_prio) {
          auto it = policy.dscp_prio->find(dscp);
          if (it != policy.dscp_prio->end()) prio = it->second;
        }
        add.push_back(DscpApp(dscp, prio));
      }
      side_effect = "trust changes to dscp; mlx5 may restart its channels";
    } else if (Drifted(drift, QosField::kDscpPrio) && policy.dscp_prio) {
      for (const auto& [dscp, prio] : *policy.dscp_prio) {
        std::vector<uint8_t> have = state->DscpPriorities(dscp);
        if (have.size() == 1 && have[0] == prio) continue;
        if (std::find(have.begin(), have.end(), prio) == have.end())
          add.push_back(DscpApp(dscp, prio));
        for (uint8_t old : have)
          if (old != prio) remove.push_back(DscpApp(dscp, old));
      }
    }
    if (!add.empty()) {
      RemediationAction a;
      a.field = field;
      a.kind = RemediationAction::Kind::kDcbSet;
      a.dcb.apps = add;
      a.old_value = fmt::format("dscp-prio {}", AppsText(remove));
      a.new_value = fmt::format("dscp-prio add {}", AppsText(add));
      a.side_effect = side_effect;
      plan.push_back(std::move(a));
    }
    if (!remove.empty()) {
      RemediationAction a;
      a.field = field;
      a.kind = RemediationAction::Kind::kDcbDeleteApps;
      a.dcb.apps = remove;
      a.old_value = fmt::format("dscp-prio {}", AppsText(remove));
      a.new_value = "dscp-prio del (those still present after the adds)";
      if (add.empty()) a.side_effect = side_effect;
      plan.push_back(std::move(a));
    }
  }

  for (QosField field : {QosField::kDcqcnNp, QosField::kDcqcnRp}) {
    const bool np = field == QosField::kDcqcnNp;
    const std::optional<uint8_t>& want = np ? policy.dcqcn_np : policy.dcqcn_rp;
    if (!want || !Drifted(drift, field)) continue;
    const auto& enabled = np ? observed.dcqcn.np_enabled : observed.dcqcn.rp_enabled;
    for (int prio = 0; prio < 8; ++prio) {
      // Only the listed priorities are enabled; others are never switched off (not checked).
      const bool target = (*want >> prio) & 1;
      if (!target || !enabled[prio].ok() || enabled[prio].value) continue;
      RemediationAction a;
      a.field = field;
      a.kind = RemediationAction::Kind::kDcqcnEnable;
      a.np = np;
      a.prio = prio;
      a.enable = target;
      a.old_value = fmt::format("ecn/{}/enable/{}={}", np ? "roce_np" : "roce_rp", prio,
                                enabled[prio].value ? 1 : 0);
      a.new_value = fmt::format("{}", target ? 1 : 0);
      plan.push_back(std::move(a));
    }
  }

  if (policy.roce_tos && Drifted(drift, QosField::kRoceTos)) {
    for (const auto& port : observed.roce_tos) {
      // Only the MOFED per-device traffic_class: writing rdma_cm configfs needs a mkdir that
      // changes RDMA-CM defaults for every consumer, which is not ours to do silently.
      if (!port.tos.mofed_tclass.ok()) continue;
      Observed<uint8_t> tos = port.tos.Effective();
      if (tos.ok() && tos.value == *policy.roce_tos) continue;
      RemediationAction a;
      a.field = QosField::kRoceTos;
      a.kind = RemediationAction::Kind::kRoceTos;
      a.rdma_device = port.device;
      a.port = port.port;
      a.value = *policy.roce_tos;
      a.old_value = fmt::format("{}/{} tclass {}", port.device, port.port,
                                tos.ok() ? std::to_string(tos.value) : "unset");
      a.new_value = std::to_string(*policy.roce_tos);
      a.side_effect = "running RC QPs are moved to the new class (RTS2RTS) where firmware allows";
      plan.push_back(std::move(a));
    }
  }

  if (policy.tcp_ecn && Drifted(drift, QosField::kTcpEcn) && observed.tcp_ecn.ok()) {
    RemediationAction a;
    a.field = QosField::kTcpEcn;
    a.kind = RemediationAction::Kind::kTcpEcn;
    a.value = *policy.tcp_ecn;
    a.old_value = std::to_string(observed.tcp_ecn.value);
    a.new_value = std::to_string(*policy.tcp_ecn);
    plan.push_back(std::move(a));
  }
  return plan;
}

std::string DescribeAction(const RemediationAction& action) {
  return fmt::format("{}: {} -> {}", QosFieldName(action.field), action.old_value,
                     action.new_value);
}

Remediator::Remediator(RemediationOptions options, QosWriter* writer)
    : options_(options), writer_(writer) {}

const Remediator::DeviceStatus* Remediator::Status(const std::string& netdev) const {
  auto it = devices_.find(netdev);
  return it == devices_.end() ? nullptr : &it->second;
}

void Remediator::ResetAll() {
  for (auto& [netdev, status] : devices_) {
    status.attempts = 0;
    status.next_allowed.reset();
    status.last_dry_run_plan.clear();
    status.gave_up = false;
  }
}

void Remediator::Retain(const std::vector<std::string>& present) {
  for (auto it = devices_.begin(); it != devices_.end();) {
    if (std::find(present.begin(), present.end(), it->first) == present.end())
      it = devices_.erase(it);
    else
      ++it;
  }
}

RemediationState Remediator::Step(const DeviceContext& context, const QosPolicy& policy,
                                  const ObservedQos& observed, const DeviceDrift& drift,
                                  Clock::time_point now, const Reread& reread,
                                  std::vector<ActionRecord>* records) {
  DeviceStatus& status = devices_[context.netdev];
  if (drift.InSync()) {
    if (!status.in_sync_since) status.in_sync_since = now;
    if (status.gave_up) {
      spdlog::info("remediation {}: in sync again, leaving the give-up state", context.netdev);
      status.gave_up = false;
      status.attempts = 0;
      status.next_allowed.reset();
    }
    // Attempts that held long enough were not undone: start counting anew.
    if (now - *status.in_sync_since >= options_.stable_reset) {
      status.attempts = 0;
      status.next_allowed.reset();
    }
    status.last_dry_run_plan.clear();
    return status.state = RemediationState::kInSync;
  }
  status.in_sync_since.reset();

  // Given up stays given up (and visible) until the device is in sync or the policy changes.
  if (status.gave_up) return status.state = RemediationState::kGaveUp;
  std::vector<RemediationAction> plan = PlanRemediation(policy, observed, drift);
  if (plan.empty()) return status.state = RemediationState::kObserveOnly;
  if (auto blocked = CheckGuardrails(context)) return status.state = *blocked;

  if (options_.mode == RemediationMode::kDryRun) {
    // Log the plan when it changes, not at every poll.
    std::string text;
    for (const auto& a : plan) text += (text.empty() ? "" : "; ") + DescribeAction(a);
    if (text != status.last_dry_run_plan) {
      status.last_dry_run_plan = text;
      for (const auto& a : plan) {
        spdlog::info("remediation dry-run {}: would set {}{}", context.netdev, DescribeAction(a),
                     a.side_effect.empty() ? "" : " (side effect: " + a.side_effect + ")");
        ++status.counts[{a.field, std::string(kResultDryRun)}];
        if (records) records->push_back({a.field, DescribeAction(a), kResultDryRun, {}});
      }
    }
    return status.state = RemediationState::kDryRun;
  }
  if (options_.mode != RemediationMode::kEnforce)
    return status.state = RemediationState::kObserveOnly;

  if (status.next_allowed && now < *status.next_allowed)
    return status.state = RemediationState::kBackoff;
  if (status.attempts >= options_.max_attempts) {
    spdlog::error(
        "remediation {}: giving up after {} attempts that did not hold (something keeps undoing "
        "the policy: DCBX from the switch, another agent, firmware?); leaving it to a human",
        context.netdev, status.attempts);
    status.gave_up = true;
    return status.state = RemediationState::kGaveUp;
  }

  ++status.attempts;
  status.attempt_times.push_back(now);
  if (status.attempt_times.size() > 16) status.attempt_times.erase(status.attempt_times.begin());
  auto wait = options_.base_backoff * (1LL << std::min(status.attempts - 1, 20));
  status.next_allowed = now + std::min<std::chrono::seconds>(wait, options_.max_backoff);
  Execute(context.netdev, policy, std::move(plan), reread, records, &status);
  return status.state = RemediationState::kActed;
}

void Remediator::Execute(const std::string& netdev, const QosPolicy& policy,
                         std::vector<RemediationAction> plan, const Reread& reread,
                         std::vector<ActionRecord>* records, DeviceStatus* status) {
  struct Pending {
    const RemediationAction* action;
    std::string error;
    bool written = false;
  };
  std::vector<Pending> done;
  for (const auto& action : plan) {
    if (!action.side_effect.empty())
      spdlog::warn("remediation {}: {} (side effect: {})", netdev, DescribeAction(action),
                   action.side_effect);
    Result<void> result;
    switch (action.kind) {
      case RemediationAction::Kind::kDcbSet:
        result = writer_->SetDcb(netdev, action.dcb);
        break;
      case RemediationAction::Kind::kDcbDeleteApps: {
        // Add-before-delete: the driver may already have replaced the old entry (mlx5 keeps one
        // priority per DSCP); delete only what is still there, or IEEE_DEL fails with ENOENT.
        ObservedQos now = reread();
        std::vector<DcbApp> still;
        if (now.dcb.ok())
          for (const auto& app : action.dcb.apps)
            if (std::find(now.dcb.value.apps.begin(), now.dcb.value.apps.end(), app) !=
                now.dcb.value.apps.end())
              still.push_back(app);
        if (!still.empty()) result = writer_->DeleteDcbApps(netdev, still);
        break;
      }
      case RemediationAction::Kind::kDcqcnEnable:
        result = writer_->WriteDcqcn(netdev, action.np, action.prio, action.enable);
        break;
      case RemediationAction::Kind::kTcpEcn:
        result = writer_->WriteTcpEcn(action.value);
        break;
      case RemediationAction::Kind::kRoceTos:
        result = writer_->WriteRoceTos(action.rdma_device, action.port, action.value);
        break;
    }
    done.push_back({&action, result.ok() ? std::string() : result.error().message, result.ok()});
  }

  // Verify by reading back: a write the kernel accepted but that did not take (or was undone at
  // once) is a mismatch, not a success.
  DeviceDrift after = EvaluateDrift(policy, reread());
  for (const auto& p : done) {
    std::string_view result = kResultFailed;
    std::string error = p.error;
    if (p.written) {
      const FieldVerdict* v = after.Find(p.action->field);
      bool ok = v != nullptr && v->status == FieldStatus::kInSync;
      result = ok ? kResultSuccess : kResultMismatch;
      if (!ok && v != nullptr) error = "read back: " + v->actual;
    }
    std::string description = DescribeAction(*p.action);
    if (result == kResultSuccess)
      spdlog::info("remediation enforce {}: {}: {}", netdev, description, result);
    else
      spdlog::warn("remediation enforce {}: {}: {}: {}", netdev, description, result, error);
    ++status->counts[{p.action->field, std::string(result)}];
    if (records) records->push_back({p.action->field, description, result, error});
  }
}

bool HasNetAdminCapability() {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_NET_ADMIN / 32].effective >> (CAP_NET_ADMIN % 32)) & 1u;
}

}  // namespace roceqos
