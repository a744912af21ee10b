#include "exporter/sampling/process_stage.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
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

TEST(ProcessStage, ReadsOncePerRefreshAndCarriesTheFiguresBetween) {
  int reads = 0;
  ProcessStats figures = Figures();
  ProcessStage stage([&]() -> Result<ProcessStats> {
    ++reads;
    return figures;
  });
  auto run_at = [&](std::chrono::nanoseconds now) {
    StageContext ctx;
    ctx.now = now;
    Snapshot draft;
    stage.Run(ctx, draft);
    return draft.process;
  };
  const std::chrono::nanoseconds t0 = std::chrono::seconds(100);
  ASSERT_TRUE(run_at(t0).has_value());
  figures.cpu_seconds = 2.5;
  // Samples inside the refresh interval read nothing and keep the last figures.
  auto carried = run_at(t0 + ProcessStage::kRefresh - std::chrono::milliseconds(1));
  EXPECT_EQ(reads, 1);
  ASSERT_TRUE(carried.has_value());
  EXPECT_DOUBLE_EQ(carried->cpu_seconds, 1.79);
  auto fresh = run_at(t0 + ProcessStage::kRefresh);
  EXPECT_EQ(reads, 2);
  ASSERT_TRUE(fresh.has_value());
  EXPECT_DOUBLE_EQ(fresh->cpu_seconds, 2.5);
}

TEST(ProcessStage, AFailedReadIsRetriedAtTheNextSample) {
  bool fail = false;
  int reads = 0;
  ProcessStage stage([&]() -> Result<ProcessStats> {
    ++reads;
    if (fail) return MakeError(EMFILE, "open /proc/self/stat: Too many open files");
    return Figures();
  });
  auto run_at = [&](std::chrono::nanoseconds now, StageContext& ctx) {
    ctx.now = now;
    Snapshot draft;
    stage.Run(ctx, draft);
    return draft.process;
  };
  StageContext first, failing, retried;
  ASSERT_TRUE(run_at(std::chrono::seconds(0), first).has_value());
  fail = true;
  // Due again after the refresh; the failure drops the figures instead of carrying them.
  EXPECT_FALSE(run_at(ProcessStage::kRefresh, failing).has_value());
  EXPECT_EQ(failing.errors.size(), 1u);
  fail = false;
  EXPECT_TRUE(run_at(ProcessStage::kRefresh + std::chrono::milliseconds(250), retried).has_value());
  EXPECT_EQ(reads, 3);
  EXPECT_TRUE(retried.errors.empty());
}

}  // namespace
}  // namespace roceqos
