#pragma once

// Remediation's writes: one pass's budget shared by its devices, DCB parts of one device sent in
// one RTM_SETDCB, stop at the first failure, and the read-back that turns each write into a
// result. Reference: docs/remediation.md "Writes built from the device as it is".

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "exporter/qos/qos_writer.h"
#include "exporter/qos/remediate_plan.h"

namespace roceqos {

/// Result labels of roce_qos_remediations_total.
inline constexpr std::string_view kResultSuccess = "success";    // written and read back equal
inline constexpr std::string_view kResultFailed = "failed";      // the write itself failed
inline constexpr std::string_view kResultMismatch = "mismatch";  // written, read back different
inline constexpr std::string_view kResultDryRun = "dry_run";     // planned only
inline constexpr std::string_view kResultSkipped = "skipped";    // not sent: an earlier one failed

struct ActionRecord {
  QosField field;
  std::string description;  // DescribeAction
  std::string_view result;
  std::string error;
};

/// (field, result) -> number of actions, per device: roce_qos_remediations_total.
using ActionCounts = std::map<std::pair<QosField, std::string>, uint64_t>;

/// Re-reads the device (the add-before-delete step, the buffer, the verification).
using QosReread = std::function<ObservedQos()>;

/// One action's fate: sent (and how the kernel answered), skipped after an earlier failure,
/// deferred by the pass budget, or not needed (tcp_ecn already written this pass).
struct ActionOutcome {
  const RemediationAction* action = nullptr;
  enum class Sent : uint8_t { kWritten, kFailed, kSkipped, kDeferred, kNotNeeded };
  Sent sent = Sent::kSkipped;
  std::string error;
};

/// The writes of one sampler pass. Not thread-safe.
class ApplyPass {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  ApplyPass(QosWriter* writer, std::chrono::milliseconds budget, Now now)
      : writer_(writer), budget_(budget), now_(std::move(now)) {}

  /// A new pass: the budget and the once-per-pass tcp_ecn write start over.
  void Begin();
  /// Something was written this pass and the budget is spent: the next device waits.
  bool BudgetSpent() const;
  /// Makes the writes in order, stopping at the first that fails or when the budget is spent;
  /// the outcome of each action, in plan order.
  std::vector<ActionOutcome> Execute(const std::string& netdev,
                                     const std::vector<RemediationAction>& plan,
                                     const QosReread& reread);

 private:
  Result<void> Send(const std::string& netdev, const RemediationAction& action, const DcbWrite& dcb,
                    const QosReread& reread);
  Result<void> SendBuffer(const std::string& netdev, const RemediationAction& action,
                          const QosReread& reread);

  QosWriter* writer_;
  std::chrono::milliseconds budget_;
  Now now_;
  std::optional<Clock::time_point> started_;
  bool wrote_ = false;
  bool tcp_ecn_written_ = false;
};

/// Turns outcomes into results by the read taken after the writes: logs one audit line per
/// action, counts it, and appends it to `records` when given.
void RecordOutcomes(const std::string& netdev, const QosPolicy& policy,
                    const std::vector<ActionOutcome>& outcomes, const ObservedQos& after,
                    std::vector<ActionRecord>* records, ActionCounts& counts);

}  // namespace roceqos
