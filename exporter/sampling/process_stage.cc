#include "exporter/sampling/process_stage.h"

#include <chrono>
#include <utility>

#include "exporter/core/error_reason.h"

namespace roceqos {

ProcessStage::ProcessStage(Reader read)
    : read_(read ? std::move(read) : Reader([] { return ReadProcessStats(); })) {}

void ProcessStage::Run(StageContext& ctx, Snapshot& draft) {
  if (last_ && ctx.now - read_at_ < kRefresh) {
    draft.process = *last_;
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  Result<ProcessStats> stats = read_();
  ctx.local_kernel_time += std::chrono::steady_clock::now() - start;
  if (!stats) {
    // No stale figures: the families are absent until a read succeeds again, tried each sample.
    last_.reset();
    const ErrorReason reason = ReasonOf(stats.error());
    ctx.errors.push_back(reason);
    fault_log_.Fault("process", ReasonName(reason), stats.error().message);
    return;
  }
  fault_log_.Ok("process");
  last_ = *stats;
  read_at_ = ctx.now;
  draft.process = *stats;
}

}  // namespace roceqos
