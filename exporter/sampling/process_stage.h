#pragma once

// The process_* figures of the exporter itself (collectors/process_stats.h), read on the sampler
// thread as a sample stage so the scrape only renders them (the scrape never touches the kernel).
// A read is four procfs files and a listing of /proc/self/fd, and /proc/self/stat sums the CPU
// time of every thread: read at every 250 ms sample it was over 40 % of the exporter's own CPU
// when the HTTP server kept 256 threads (docs/decisions.md, "process_* metrics").
// So the figures are read every kRefresh and carried into the samples between: a 15 s scrape
// sees them at most 5 s old, as a client library's would be at most one scrape old.

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>

#include "collectors/process_stats.h"
#include "exporter/core/fault_log.h"
#include "exporter/sampling/sampler.h"

namespace roceqos {

class ProcessStage : public SampleStage {
 public:
  using Reader = std::function<Result<ProcessStats>()>;

  static constexpr std::chrono::nanoseconds kRefresh = std::chrono::seconds(5);

  /// `read` defaults to ReadProcessStats() of /proc; tests inject fixtures.
  explicit ProcessStage(Reader read = {});

  std::string_view Source() const override { return "process"; }
  void Run(StageContext& ctx, Snapshot& draft) override;

 private:
  Reader read_;
  FaultLog fault_log_;
  std::optional<ProcessStats> last_;  // the last successful read, while it is fresh
  std::chrono::nanoseconds read_at_{};
};

}  // namespace roceqos
