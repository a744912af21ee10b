#include "exporter/qos/remediate_apply.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/log_event.h"

namespace roceqos {
namespace {

// The writes in the order they go out: consecutive DCB sets merged into one DcbWrite, so the
// parts of one device travel in a single RTM_SETDCB (dcbnl_ieee_set applies ETS, PFC, buffer
// and APP in that order and stops at the first error; docs/remediation.md).
struct Batch {
  std::vector<size_t> actions;  // indices into the plan
  DcbWrite dcb;
};

std::vector<Batch> Batches(const std::vector<RemediationAction>& plan) {
  std::vector<Batch> batches;
  for (size_t i = 0; i < plan.size(); ++i) {
    const RemediationAction& a = plan[i];
    const bool dcb_set = a.kind == RemediationAction::Kind::kDcbSet;
    if (dcb_set && !batches.empty() && !batches.back().actions.empty() &&
        plan[batches.back().actions.back()].kind == RemediationAction::Kind::kDcbSet) {
      Batch& b = batches.back();
      if (a.dcb.ets) b.dcb.ets = a.dcb.ets;
      if (a.dcb.pfc) b.dcb.pfc = a.dcb.pfc;
      if (a.dcb.buffer) b.dcb.buffer = a.dcb.buffer;
      b.dcb.apps.insert(b.dcb.apps.end(), a.dcb.apps.begin(), a.dcb.apps.end());
      b.actions.push_back(i);
      continue;
    }
    batches.push_back(Batch{{i}, a.dcb});
  }
  return batches;
}

// Add-before-delete: the driver may already have replaced the old entry (mlx5 keeps one priority
// per DSCP); delete only what a read taken now still shows, or IEEE_DEL fails with ENOENT.
std::vector<DcbApp> StillPresent(const std::vector<DcbApp>& apps, const ObservedQos& now) {
  std::vector<DcbApp> still;
  if (!now.dcb.ok()) return still;
  for (const auto& app : apps)
    if (std::find(now.dcb.value.apps.begin(), now.dcb.value.apps.end(), app) !=
        now.dcb.value.apps.end())
      still.push_back(app);
  return still;
}

void LogSideEffects(const std::string& netdev, const std::vector<RemediationAction>& plan,
                    const std::vector<size_t>& actions) {
  for (size_t i : actions)
    if (!plan[i].side_effect.empty())
      LogEvent(spdlog::level::warn, "remediation: a write with a side effect",
               {{"netdev", netdev},
                {"field", QosFieldName(plan[i].field)},
                {"action", DescribeAction(plan[i])},
                {"side_effect", plan[i].side_effect}});
}

}  // namespace

void ApplyPass::Begin() {
  started_.reset();
  wrote_ = false;
  tcp_ecn_written_ = false;
}

bool ApplyPass::BudgetSpent() const { return wrote_ && started_ && now_() - *started_ >= budget_; }

Result<void> ApplyPass::SendBuffer(const std::string& netdev, const RemediationAction& action,
                                   const QosReread& reread) {
  const ObservedQos now = reread();
  if (!now.dcb.ok() || !now.dcb.value.buffer)
    return MakeError(EIO, "buffer: the device no longer reports its buffers");
  DcbWrite write;
  write.buffer = BufferToSend(*action.buffer, *now.dcb.value.buffer);
  return writer_->SetDcb(netdev, write);
}

Result<void> ApplyPass::Send(const std::string& netdev, const RemediationAction& action,
                             const DcbWrite& dcb, const QosReread& reread) {
  switch (action.kind) {
    case RemediationAction::Kind::kDcbSet:
      return writer_->SetDcb(netdev, dcb);
    case RemediationAction::Kind::kDcbSetBuffer:
      return SendBuffer(netdev, action, reread);
    case RemediationAction::Kind::kDcbDeleteApps:
      if (auto still = StillPresent(action.dcb.apps, reread()); !still.empty())
        return writer_->DeleteDcbApps(netdev, still);
      return {};
    case RemediationAction::Kind::kDcqcnEnable:
      return writer_->WriteDcqcn(netdev, action.np, action.prio, action.enable);
    case RemediationAction::Kind::kTcpEcn:
      tcp_ecn_written_ = true;
      return writer_->WriteTcpEcn(action.value);
    case RemediationAction::Kind::kRoceTos:
      return writer_->WriteRoceTos(action.rdma_device, action.port, action.value);
    case RemediationAction::Kind::kDcqcnParam:
      return writer_->WriteDcqcnParam(netdev, action.np, action.param, action.param_value);
  }
  return {};
}

std::vector<ActionOutcome> ApplyPass::Execute(const std::string& netdev,
                                              const std::vector<RemediationAction>& plan,
                                              const QosReread& reread) {
  std::vector<ActionOutcome> outcomes(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) outcomes[i].action = &plan[i];
  if (!started_) started_ = now_();
  bool failed = false;
  for (const Batch& batch : Batches(plan)) {
    const RemediationAction& first = plan[batch.actions.front()];
    ActionOutcome::Sent sent = ActionOutcome::Sent::kWritten;
    std::string error;
    if (failed) {
      sent = ActionOutcome::Sent::kSkipped;  // stop at the first failed write
    } else if (BudgetSpent()) {
      sent = ActionOutcome::Sent::kDeferred;
    } else if (first.kind == RemediationAction::Kind::kTcpEcn && tcp_ecn_written_) {
      sent = ActionOutcome::Sent::kNotNeeded;  // host-wide: one write per pass, already made
    } else {
      LogSideEffects(netdev, plan, batch.actions);
      Result<void> result = Send(netdev, first, batch.dcb, reread);
      wrote_ = true;
      if (!result.ok()) {
        failed = true;
        sent = ActionOutcome::Sent::kFailed;
        error = result.error().message;
      }
    }
    for (size_t i : batch.actions) {
      outcomes[i].sent = sent;
      outcomes[i].error = error;
    }
  }
  return outcomes;
}

void RecordOutcomes(const std::string& netdev, const QosPolicy& policy,
                    const std::vector<ActionOutcome>& outcomes, const ObservedQos& after,
                    std::vector<ActionRecord>* records, ActionCounts& counts) {
  const DeviceDrift drift = EvaluateDrift(policy, after);
  for (const ActionOutcome& o : outcomes) {
    // Neither tried nor failed: left for the next pass, or made by another device this pass.
    if (o.sent == ActionOutcome::Sent::kDeferred || o.sent == ActionOutcome::Sent::kNotNeeded)
      continue;
    const FieldVerdict* v = drift.Find(o.action->field);
    const bool holds = v != nullptr && v->status == FieldStatus::kInSync;
    std::string_view result = kResultSkipped;
    std::string error = o.error;
    switch (o.sent) {
      case ActionOutcome::Sent::kWritten:
        result = holds ? kResultSuccess : kResultMismatch;
        if (!holds && v != nullptr) error = "read back: " + v->actual;
        break;
      case ActionOutcome::Sent::kFailed:
        // A message with several DCB parts: the kernel applied those before the failing one.
        result = holds ? kResultSuccess : kResultFailed;
        if (holds) error = "applied before the kernel stopped at a later part: " + o.error;
        break;
      default:
        error = "not sent: an earlier write failed";
        break;
    }
    std::string description = DescribeAction(*o.action);
    if (result == kResultSuccess && error.empty())
      LogEvent(spdlog::level::info, "remediation enforce",
               {{"netdev", netdev},
                {"field", QosFieldName(o.action->field)},
                {"action", description},
                {"result", result}});
    else
      LogEvent(spdlog::level::warn, "remediation enforce",
               {{"netdev", netdev},
                {"field", QosFieldName(o.action->field)},
                {"action", description},
                {"result", result},
                {"error", error}});
    ++counts[{o.action->field, std::string(result)}];
    if (records) records->push_back({o.action->field, description, result, error});
  }
}

}  // namespace roceqos
