#include "exporter/sampling/process_stage.h"

#include <chrono>
#include <utility>

#include "exporter/core/error_reason.h"

namespace roceqos {

ProcessStage::ProcessStage(Reader read)
    : read_(read ? std::move(read) : Reader([] { return ReadProcessStats(); })) {}

void ProcessStage::Run(StageContext& ctx, Snapshot& draft) {
  const auto start = std::chrono::steady_clock::now();
  Result<ProcessStats> stats = read_();
  ctx.local_kernel_time += std::chrono::steady_clock::now() - start;
  if (!stats) {
    // No stale figures: the families are absent until a read succeeds again.
    const ErrorReason reason = ReasonOf(stats.error());
    ctx.errors.push_back(reason);
    fault_log_.Fault("process", ReasonName(reason), stats.error().message);
    return;
  }
  fault_log_.Ok("process");
  draft.process = *stats;
}

}  // namespace roceqos
