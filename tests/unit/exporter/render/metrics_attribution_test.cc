#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "exporter/core/attribution_state.h"
#include "exporter/render/metrics.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/metric_families.h"

namespace roceqos {
namespace {

using testing::Count;
using testing::MakeDevice;
using testing::Value;

Snapshot WithOwners(const std::vector<std::string>& netdevs) {
  Snapshot s;
  for (const std::string& n : netdevs) {
    DeviceSnapshot d;
    d.device = std::make_shared<const Device>(MakeDevice(n, 2));
    s.devices.push_back(d);
  }
  auto state = std::make_shared<AttributionState>();
  state->rows = {
      {"sim0", "mlx5_0", "pod", "ml/trainer-0", "ml", "trainer-0",
       "0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b", 12},
      {"sim0", "mlx5_0", "kernel", "ib_core", "", "", "", 1},
      {"sim1", "mlx5_1", "slurm_job", "4242", "", "", "", 3},
  };
  state->gpus = {{"ml", "trainer-0", "0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b", "nvidia.com/gpu",
                  "GPU-2f6b1c9e"}};
  state->vfs = {{"sim0", "ml", "trainer-1", "", "intel.com/sriov_rdma", "0000:3b:00.2"},
                {"sim1", "ml", "trainer-1", "", "intel.com/sriov_rdma", "0000:3b:08.2"}};
  state->reads = 7;
  state->errors = {{"malformed", 1}, {"permission", 0}};
  state->interval_seconds = 15;
  s.attribution = state;
  return s;
}

TEST(RenderAttribution, OneSeriesPerOwnerWithPodLabels) {
  const Snapshot s = WithOwners({"sim0", "sim1"});
  const Families f = RenderSnapshot(&s);
  EXPECT_DOUBLE_EQ(Value(f, "roce_workload_qps",
                         {{"netdev", "sim0"},
                          {"rdma_device", "mlx5_0"},
                          {"kind", "pod"},
                          {"workload", "ml/trainer-0"},
                          {"pod_namespace", "ml"},
                          {"pod_name", "trainer-0"},
                          {"pod_uid", "0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b"}}),
                   12);
  EXPECT_DOUBLE_EQ(Value(f, "roce_workload_qps",
                         {{"netdev", "sim1"},
                          {"rdma_device", "mlx5_1"},
                          {"kind", "slurm_job"},
                          {"workload", "4242"},
                          {"pod_namespace", ""},
                          {"pod_name", ""},
                          {"pod_uid", ""}}),
                   3);
  EXPECT_EQ(Count(f, "roce_workload_qps"), 3u);
  EXPECT_DOUBLE_EQ(Value(f, "roce_exporter_attribution_reads_total", {}), 7);
  EXPECT_DOUBLE_EQ(
      Value(f, "roce_exporter_attribution_read_errors_total", {{"reason", "malformed"}}), 1);
  EXPECT_DOUBLE_EQ(Value(f, "roce_exporter_attribution_interval_seconds", {}), 15);
}

TEST(RenderAttribution, KubeletGpusAsInfoSeries) {
  const Snapshot s = WithOwners({"sim0"});
  const Families f = RenderSnapshot(&s);
  EXPECT_DOUBLE_EQ(Value(f, "roce_workload_gpu_info",
                         {{"pod_namespace", "ml"},
                          {"pod_name", "trainer-0"},
                          {"pod_uid", "0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b"},
                          {"resource", "nvidia.com/gpu"},
                          {"device_id", "GPU-2f6b1c9e"}}),
                   1);
  EXPECT_EQ(Count(f, "roce_workload_gpu_info"), 1u);
}

TEST(RenderAttribution, KubeletVfsUnderTheirPfsNetdev) {
  const Snapshot s = WithOwners({"sim0", "sim1"});
  const Families f = RenderSnapshot(&s);
  EXPECT_DOUBLE_EQ(Value(f, "roce_workload_vf_info",
                         {{"netdev", "sim0"},
                          {"pod_namespace", "ml"},
                          {"pod_name", "trainer-1"},
                          {"pod_uid", ""},
                          {"resource", "intel.com/sriov_rdma"},
                          {"vf_pci_address", "0000:3b:00.2"}}),
                   1);
  EXPECT_EQ(Count(f, "roce_workload_vf_info"), 2u);
}

TEST(RenderAttribution, OnlyNetdevsOfTheSnapshot) {
  const Snapshot s = WithOwners({"sim1"});  // sim0 left the selection
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_workload_qps"), 1u);
  EXPECT_EQ(Count(f, "roce_workload_vf_info"), 1u);
}

TEST(RenderAttribution, NothingWithThePollerOff) {
  Snapshot s = WithOwners({"sim0"});
  s.attribution.reset();
  const Families f = RenderSnapshot(&s);
  EXPECT_EQ(Count(f, "roce_workload_qps"), 0u);
  EXPECT_EQ(Count(f, "roce_workload_gpu_info"), 0u);
  EXPECT_EQ(Count(f, "roce_workload_vf_info"), 0u);
  EXPECT_EQ(Count(f, "roce_exporter_attribution_reads_total"), 0u);
  EXPECT_EQ(Count(f, "roce_exporter_attribution_interval_seconds"), 0u);
}

}  // namespace
}  // namespace roceqos
