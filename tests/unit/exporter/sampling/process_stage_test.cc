#include "exporter/sampling/process_stage.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>

#include "exporter/render/metrics.h"
#include "tests/unit/support/metric_families.h"

namespace roceqos {
namespace {

using testing::Find;
using testing::Value;

ProcessStats Figures() {
  return ProcessStats{.cpu_seconds = 1.79,
                      .resident_bytes = 9670656,
                      .virtual_bytes = 187654144,
                      .open_fds = 17,
                      .max_fds = 1024,
                      .start_time_seconds = 1764297876.54};
}

TEST(ProcessStage, AttachesTheFiguresAndTheScrapeRendersThem) {
  int reads = 0;
  ProcessStage stage([&]() -> Result<ProcessStats> {
    ++reads;
    return Figures();
  });
  EXPECT_EQ(stage.Source(), "process");
  StageContext ctx;
  Snapshot draft;
  stage.Run(ctx, draft);
  EXPECT_EQ(reads, 1);
  EXPECT_TRUE(ctx.errors.empty());
  ASSERT_TRUE(draft.process.has_value());

  const Families f = RenderSnapshot(&draft);
  EXPECT_EQ(reads, 1);  // rendering reads nothing
  EXPECT_DOUBLE_EQ(Value(f, "process_cpu_seconds_total", {}), 1.79);
  EXPECT_EQ(Find(f, "process_cpu_seconds_total")->type, prometheus::MetricType::Counter);
  EXPECT_EQ(Value(f, "process_resident_memory_bytes", {}), 9670656);
  EXPECT_EQ(Value(f, "process_virtual_memory_bytes", {}), 187654144);
  EXPECT_EQ(Value(f, "process_open_fds", {}), 17);
  EXPECT_EQ(Value(f, "process_max_fds", {}), 1024);
  EXPECT_DOUBLE_EQ(Value(f, "process_start_time_seconds", {}), 1764297876.54);
}

TEST(ProcessStage, FailedReadCountsAnErrorAndLeavesNoFamilies) {
  ProcessStage stage([]() -> Result<ProcessStats> {
    return MakeError(EACCES, "open /proc/self/stat: Permission denied");
  });
  StageContext ctx;
  Snapshot draft;
  stage.Run(ctx, draft);
  ASSERT_EQ(ctx.errors.size(), 1u);
  EXPECT_EQ(ctx.errors[0], ErrorReason::kPermission);
  EXPECT_FALSE(draft.process.has_value());
  EXPECT_EQ(Find(RenderSnapshot(&draft), "process_open_fds"), nullptr);
}

}  // namespace
}  // namespace roceqos
