#pragma once

// The process_* figures of the exporter itself (collectors/process_stats.h), read on the sampler
// thread as a sample stage so the scrape only renders them (the scrape never touches the kernel).
// Four small reads and one directory listing of the process's own /proc per sample: about 0.1 ms
// on the 2-core development machine under load (0.04% of a 250 ms period), counted in the budget.

#include <functional>
#include <string_view>

#include "collectors/process_stats.h"
#include "exporter/core/fault_log.h"
#include "exporter/sampling/sampler.h"

namespace roceqos {

class ProcessStage : public SampleStage {
 public:
  using Reader = std::function<Result<ProcessStats>()>;

  /// `read` defaults to ReadProcessStats() of /proc; tests inject fixtures.
  explicit ProcessStage(Reader read = {});

  std::string_view Source() const override { return "process"; }
  void Run(StageContext& ctx, Snapshot& draft) override;

 private:
  Reader read_;
  FaultLog fault_log_;
};

}  // namespace roceqos
