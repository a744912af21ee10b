#include "exporter/sampling/attribution_poller.h"

#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collectors/rdma_consumers.h"
#include "tests/unit/support/netlink_messages.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

constexpr char kUid[] = "0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b";
constexpr char kUidUnderscored[] = "0f4a1c2e_7b3d_4e5f_9a8b_1c2d3e4f5a6b";
constexpr char kOtherUid[] = "11111111-2222-3333-4444-555555555555";
constexpr char kOtherUidUnderscored[] = "11111111_2222_3333_4444_555555555555";
constexpr char kContainer[] = "3b9f2c1d4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c";

/// One QP of a dump: a user QP (pid) or a kernel one (kern_name); port 0 = not bound yet.
struct Qp {
  uint32_t port = 1;
  uint32_t pid = 0;
  std::string kern_name;
};
Qp User(uint32_t pid, uint32_t port = 1) { return {port, pid, ""}; }
Qp Kernel(std::string name, uint32_t port = 1) { return {port, 0, std::move(name)}; }

/// What the poller asked of its I/O.
struct IoCalls {
  int dumps = 0;
  int pod_listings = 0;
};

/// Dumps answered from `qps` (a device absent from it is ENODEV); owners from a temp procfs;
/// names from a temp /var/log/pods.
class FakeIo final : public AttributionIo {
 public:
  FakeIo(std::map<uint32_t, std::vector<Qp>>* qps, std::map<uint32_t, uint32_t>* ports,
         std::string proc, std::string logs, IoCalls* calls)
      : qps_(qps), ports_(ports), proc_(std::move(proc)), logs_(std::move(logs)), calls_(calls) {}

  Result<void> DumpQps(uint32_t device_index, RdmaQpTally& tally) override {
    ++calls_->dumps;
    auto found = qps_->find(device_index);
    if (found == qps_->end()) return MakeError(ENODEV, "no such device");
    netlink::Message msg(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET), NLM_F_MULTI);
    msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, device_index);
    msg.PutString(RDMA_NLDEV_ATTR_DEV_NAME, "dev");
    const size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_RES_QP);
    uint32_t lqpn = 1;
    for (const Qp& qp : found->second) {
      const size_t entry = msg.BeginNest(RDMA_NLDEV_ATTR_RES_QP_ENTRY);
      if (qp.port != 0) msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, qp.port);
      msg.PutU32(RDMA_NLDEV_ATTR_RES_LQPN, lqpn++);
      if (!qp.kern_name.empty()) msg.PutString(RDMA_NLDEV_ATTR_RES_KERN_NAME, qp.kern_name);
      if (qp.pid != 0) msg.PutU32(RDMA_NLDEV_ATTR_RES_PID, qp.pid);
      msg.EndNest(entry);
    }
    msg.EndNest(table);
    const netlink::testing::Buffer payload = netlink::testing::AttrStream(msg);
    return tally.AddQpReply({payload.data(), payload.size()});
  }
  Result<uint32_t> PortCount(uint32_t device_index) override {
    auto found = ports_->find(device_index);
    if (found == ports_->end()) return MakeError(ENODEV, "no such device");
    return found->second;
  }
  Result<std::optional<CgroupOwner>> ReadOwner(uint32_t pid) override {
    return ReadProcCgroupOwner(proc_, pid);
  }
  Result<PodNames> ReadPodNames() override {
    ++calls_->pod_listings;
    return ReadPodLogDirs(logs_);
  }

 private:
  std::map<uint32_t, std::vector<Qp>>* qps_;
  std::map<uint32_t, uint32_t>* ports_;
  std::string proc_, logs_;
  IoCalls* calls_;
};

class AttributionPollerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("attribution_poller_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc");
    fs::create_directories(root_ / "pods");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Cgroup(uint32_t pid, const std::string& path) {
    fs::create_directories(root_ / "proc" / std::to_string(pid));
    std::ofstream(root_ / "proc" / std::to_string(pid) / "cgroup") << "0::" << path << "\n";
  }
  void PodLogDir(const std::string& entry) { fs::create_directories(root_ / "pods" / entry); }

  AttributionPoller MakePoller() {
    return AttributionPoller({.interval = std::chrono::seconds(15)},
                             std::make_unique<FakeIo>(&qps_, &ports_, (root_ / "proc").string(),
                                                      (root_ / "pods").string(), &calls_),
                             [this] { return targets_; });
  }

  /// The published row of (netdev, kind, workload); nullopt when there is none.
  static std::optional<AttributionRow> Row(const AttributionState& state, const std::string& netdev,
                                           const std::string& kind, const std::string& workload) {
    for (const AttributionRow& row : state.rows) {
      if (row.netdev == netdev && row.kind == kind && row.workload == workload) return row;
    }
    return std::nullopt;
  }

  fs::path root_;
  std::map<uint32_t, std::vector<Qp>> qps_;
  std::map<uint32_t, uint32_t> ports_;
  std::vector<AttributionTarget> targets_;
  IoCalls calls_;
};

TEST_F(AttributionPollerTest, NamesEveryKindOfOwner) {
  targets_ = {{"eth0", "mlx5_0", 3, 1, ""}};
  ports_[3] = 1;
  qps_[3] = {Kernel("ib_core"), User(100), User(100), User(200), User(300), User(400), User(500)};
  Cgroup(100, std::string("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod") +
                  kUidUnderscored + ".slice/cri-containerd-" + kContainer + ".scope");
  Cgroup(200, std::string("/kubepods.slice/kubepods-pod") + kOtherUidUnderscored + ".slice");
  Cgroup(300, "/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0");
  Cgroup(400, "/system.slice/rping.service");
  Cgroup(500, "/");                                // no known shape
  PodLogDir(std::string("ml_trainer-0_") + kUid);  // kOtherUid has no log directory

  AttributionPoller poller = MakePoller();
  poller.PollOnce();
  std::shared_ptr<const AttributionState> state = poller.Latest();
  ASSERT_TRUE(state);

  std::optional<AttributionRow> pod = Row(*state, "eth0", "pod", "ml/trainer-0");
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->qps, 2u);
  EXPECT_EQ(pod->rdma_device, "mlx5_0");
  EXPECT_EQ(pod->pod_namespace, "ml");
  EXPECT_EQ(pod->pod_name, "trainer-0");
  EXPECT_EQ(pod->pod_uid, kUid);
  // No name known: the workload is the UID, namespace and name stay empty.
  std::optional<AttributionRow> unnamed = Row(*state, "eth0", "pod", kOtherUid);
  ASSERT_TRUE(unnamed);
  EXPECT_EQ(unnamed->pod_uid, kOtherUid);
  EXPECT_EQ(unnamed->pod_name, "");
  EXPECT_EQ(Row(*state, "eth0", "slurm_job", "4242")->qps, 1u);
  EXPECT_EQ(Row(*state, "eth0", "systemd_unit", "rping.service")->qps, 1u);
  EXPECT_EQ(Row(*state, "eth0", "kernel", "ib_core")->qps, 1u);
  EXPECT_EQ(Row(*state, "eth0", "unknown", "")->qps, 1u);
  EXPECT_EQ(state->rows.size(), 6u);
  EXPECT_EQ(state->reads, 1u);
  EXPECT_EQ(state->errors.at("malformed"), 0u);
  EXPECT_DOUBLE_EQ(state->interval_seconds, 15);
}

TEST_F(AttributionPollerTest, AVanishedPidIsUnknownNotAnError) {
  targets_ = {{"eth0", "mlx5_0", 3, 1, ""}};
  qps_[3] = {User(777), User(0)};  // 777 exited after the dump; PID 0: exiting already
  AttributionPoller poller = MakePoller();
  poller.PollOnce();
  std::shared_ptr<const AttributionState> state = poller.Latest();
  ASSERT_EQ(state->rows.size(), 1u);
  EXPECT_EQ(Row(*state, "eth0", "unknown", "")->qps, 2u);
  for (const auto& [reason, count] : state->errors) EXPECT_EQ(count, 0u) << reason;
}

TEST_F(AttributionPollerTest, AMalformedCgroupFileIsCountedAndUnknown) {
  targets_ = {{"eth0", "mlx5_0", 3, 1, ""}};
  qps_[3] = {User(9)};
  fs::create_directories(root_ / "proc/9");
  std::ofstream(root_ / "proc/9/cgroup") << "garbage\n";
  AttributionPoller poller = MakePoller();
  poller.PollOnce();
  EXPECT_EQ(poller.Latest()->errors.at("malformed"), 1u);
  EXPECT_EQ(Row(*poller.Latest(), "eth0", "unknown", "")->qps, 1u);
}

TEST_F(AttributionPollerTest, QpsFollowTheirPortToItsNetdev) {
  // A two-port device with a netdev per port, and an unselected third port: each QP counts
  // under its port's netdev; a port-0 QP of a multi-port device is left out.
  targets_ = {{"eth0", "mlx4_0", 5, 1, ""}, {"eth1", "mlx4_0", 5, 2, ""}};
  ports_[5] = 3;
  qps_[5] = {User(300, 1), User(300, 2), User(300, 2), User(300, 3), User(300, 0)};
  Cgroup(300, "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0");
  AttributionPoller poller = MakePoller();
  poller.PollOnce();
  std::shared_ptr<const AttributionState> state = poller.Latest();
  EXPECT_EQ(Row(*state, "eth0", "slurm_job", "7")->qps, 1u);
  EXPECT_EQ(Row(*state, "eth1", "slurm_job", "7")->qps, 2u);
  EXPECT_EQ(state->rows.size(), 2u);
}

TEST_F(AttributionPollerTest, PortZeroCountsOnAOnePortDevice) {
  // 5.10's GSI QP has no port; a one-port device (every mlx5 function, rxe) says whose it is.
  targets_ = {{"eth0", "rxe0", 2, 1, ""}};
  ports_[2] = 1;
  qps_[2] = {Kernel("ib_core", 0), Kernel("rdma_cm", 1)};
  AttributionPoller poller = MakePoller();
  poller.PollOnce();
  EXPECT_EQ(Row(*poller.Latest(), "eth0", "kernel", "ib_core")->qps, 1u);
  EXPECT_EQ(Row(*poller.Latest(), "eth0", "kernel", "rdma_cm")->qps, 1u);
}

TEST_F(AttributionPollerTest, AVanishedDeviceLeavesNoRowsAndNoError) {
  targets_ = {{"eth0", "mlx5_0", 3, 1, ""}, {"eth1", "mlx5_1", 4, 1, ""}};
  qps_[3] = {Kernel("ib_core")};
  qps_[4] = {Kernel("ib_core")};
  AttributionPoller poller = MakePoller();
  poller.PollOnce();
  ASSERT_EQ(poller.Latest()->rows.size(), 2u);
  qps_.erase(4);  // unregistered after the sampler's selection named it
  poller.PollOnce();
  std::shared_ptr<const AttributionState> state = poller.Latest();
  ASSERT_EQ(state->rows.size(), 1u);
  EXPECT_EQ(state->rows[0].netdev, "eth0");
  EXPECT_EQ(state->reads, 4u);
  EXPECT_EQ(state->errors.at("device_gone"), 0u);
}

TEST_F(AttributionPollerTest, OneDumpPerDeviceAndOneCgroupReadPerPid) {
  // A LAG port listed under the bond and a slave: one dump; a PID on both netdevs: one owner.
  targets_ = {{"bond0", "mlx5_bond_0", 7, 1, ""},
              {"eth0", "mlx5_bond_0", 7, 1, ""},
              {"bond0", "mlx5_bond_0", 7, 1, ""}};
  qps_[7] = {User(300), User(300)};
  Cgroup(300, "/system.slice/trainer.service");
  AttributionPoller poller = MakePoller();
  poller.PollOnce();
  EXPECT_EQ(calls_.dumps, 1);
  EXPECT_EQ(Row(*poller.Latest(), "bond0", "systemd_unit", "trainer.service")->qps, 2u);
  EXPECT_EQ(Row(*poller.Latest(), "eth0", "systemd_unit", "trainer.service")->qps, 2u);
}

TEST_F(AttributionPollerTest, OwnersBeyondTheCapAreSummedIntoUnknown) {
  targets_ = {{"eth0", "mlx5_0", 3, 1, ""}};
  const uint32_t owners = AttributionPoller::kMaxOwnersPerNetdev + 4;
  for (uint32_t pid = 1000; pid < 1000 + owners; ++pid) {
    Cgroup(pid, "/system.slice/job" + std::to_string(pid) + ".service");
    qps_[3].push_back(User(pid));
    if (pid < 1010) qps_[3].push_back(User(pid));  // the first ten hold two QPs each
  }
  qps_[3].push_back(User(0));
  AttributionPoller poller = MakePoller();
  poller.PollOnce();
  std::shared_ptr<const AttributionState> state = poller.Latest();
  EXPECT_EQ(state->rows.size(), AttributionPoller::kMaxOwnersPerNetdev + 1);
  EXPECT_EQ(Row(*state, "eth0", "systemd_unit", "job1000.service")->qps, 2u);
  EXPECT_EQ(Row(*state, "eth0", "unknown", "")->qps, 5u);  // 4 cut owners + the PID 0 QP
  uint64_t total = 0;
  for (const AttributionRow& row : state->rows) total += row.qps;
  EXPECT_EQ(total, owners + 10 + 1);
}

TEST_F(AttributionPollerTest, ThePodNameHookWins) {
  targets_ = {{"eth0", "mlx5_0", 3, 1, ""}};
  qps_[3] = {User(100)};
  Cgroup(100, std::string("/kubepods/besteffort/pod") + kUid + "/" + kContainer);
  PodLogDir(std::string("old_name_") + kUid);
  AttributionPoller poller = MakePoller();
  poller.SetPodNameSource([] { return PodNames{{kUid, PodName{"team", "from-kubelet"}}}; });
  poller.PollOnce();
  EXPECT_TRUE(Row(*poller.Latest(), "eth0", "pod", "team/from-kubelet"));
}

TEST_F(AttributionPollerTest, KubeletGpusCarryThePodUidFromItsLogDirectory) {
  PodLogDir(std::string("ml_trainer-0_") + kUid);
  AttributionPoller poller = MakePoller();
  poller.SetPodDeviceSource([]() -> Result<std::vector<PodDevice>> {
    return std::vector<PodDevice>{
        {"ml", "trainer-0", "nvidia.com/gpu", "GPU-b", ""},
        {"ml", "trainer-0", "nvidia.com/gpu", "GPU-a", ""},
        {"ml", "trainer-0", "nvidia.com/gpu", "GPU-a", ""},  // two containers, one device: one row
        {"ml", "trainer-0", "rdma/hca_shared_devices_a", "hca0", ""},  // not a GPU
        {"ml", "trainer-0", "intel.com/sriov_netdevice", "0000:3b:00.2", ""},
        {"web", "infer-1", "nvidia.com/mig-1g.10gb", "MIG-7", ""},  // no log directory: no UID
        {"web", "infer-2", "amd.com/gpu", "0000:c1:00.0", ""},
    };
  });
  poller.PollOnce();
  const std::vector<AttributionGpuRow> want = {
      {"ml", "trainer-0", kUid, "nvidia.com/gpu", "GPU-a"},
      {"ml", "trainer-0", kUid, "nvidia.com/gpu", "GPU-b"},
      {"web", "infer-1", "", "nvidia.com/mig-1g.10gb", "MIG-7"},
      {"web", "infer-2", "", "amd.com/gpu", "0000:c1:00.0"},
  };
  EXPECT_EQ(poller.Latest()->gpus, want);
}

TEST_F(AttributionPollerTest, KubeletVfsAreRowsUnderTheSelectedNetdevsOfTheirPf) {
  // eth0's PF is selected twice (itself and a bond's slave); eth1 has no PCI function.
  targets_ = {{"eth0", "mlx5_0", 3, 1, "0000:3b:00.0"},
              {"bond0", "mlx5_bond_0", 5, 1, "0000:3b:00.0"},
              {"eth1", "rxe0", 4, 1, ""}};
  qps_[3] = {};
  qps_[4] = {};
  qps_[5] = {};
  PodLogDir(std::string("ml_trainer-1_") + kUid);
  AttributionPoller poller = MakePoller();
  poller.SetPodDeviceSource([]() -> Result<std::vector<PodDevice>> {
    return std::vector<PodDevice>{
        {"ml", "trainer-1", "intel.com/sriov_rdma", "0000:3b:00.2", "0000:3b:00.0"},
        {"ml", "trainer-1", "intel.com/sriov_rdma", "0000:3b:00.3", "0000:3b:00.0"},
        {"web", "infer-1", "intel.com/sriov_rdma", "0000:af:00.2",
         "0000:af:00.0"},                                                // PF unselected
        {"web", "infer-1", "intel.com/sriov_rdma", "0000:af:00.4", ""},  // not a VF (no physfn)
    };
  });
  poller.PollOnce();
  const std::vector<AttributionVfRow> want = {
      {"bond0", "ml", "trainer-1", kUid, "intel.com/sriov_rdma", "0000:3b:00.2"},
      {"bond0", "ml", "trainer-1", kUid, "intel.com/sriov_rdma", "0000:3b:00.3"},
      {"eth0", "ml", "trainer-1", kUid, "intel.com/sriov_rdma", "0000:3b:00.2"},
      {"eth0", "ml", "trainer-1", kUid, "intel.com/sriov_rdma", "0000:3b:00.3"},
  };
  EXPECT_EQ(poller.Latest()->vfs, want);
  EXPECT_TRUE(poller.Latest()->gpus.empty());
}

TEST_F(AttributionPollerTest, PodLogsAreListedOnlyWhenAPodOrAGpuNeedsAName) {
  targets_ = {{"eth0", "mlx5_0", 3, 1, ""}};
  qps_[3] = {User(300)};
  Cgroup(300, "/system.slice/trainer.service");
  std::vector<PodDevice> devices = {{"ml", "trainer-0", "rdma/hca_shared_devices_a", "hca0", ""}};
  AttributionPoller poller = MakePoller();
  poller.SetPodDeviceSource([&devices]() -> Result<std::vector<PodDevice>> { return devices; });
  poller.PollOnce();
  EXPECT_EQ(calls_.pod_listings, 0);  // a unit's QPs and no GPU: no name to look up
  devices.push_back({"ml", "trainer-0", "nvidia.com/gpu", "GPU-a", ""});
  qps_[3].push_back(User(100));
  Cgroup(100, std::string("/kubepods/besteffort/pod") + kUid + "/" + kContainer);
  poller.PollOnce();
  EXPECT_EQ(calls_.pod_listings, 1);  // the pod's QPs and its GPU share one listing
}

TEST_F(AttributionPollerTest, AFailedKubeletListLeavesNoGpuRowsAndIsCounted) {
  bool fail = false;
  AttributionPoller poller = MakePoller();
  poller.SetPodDeviceSource([&fail]() -> Result<std::vector<PodDevice>> {
    if (fail) return MakeError(ECONNREFUSED, "kubelet restarting");
    return std::vector<PodDevice>{{"ml", "trainer-0", "nvidia.com/gpu", "GPU-a", ""}};
  });
  poller.PollOnce();
  EXPECT_EQ(poller.Latest()->gpus.size(), 1u);
  uint64_t errors_before = 0;
  for (const auto& [reason, n] : poller.Latest()->errors) errors_before += n;
  fail = true;
  poller.PollOnce();
  EXPECT_TRUE(poller.Latest()->gpus.empty());  // no stale rows from the last good List
  uint64_t errors_after = 0;
  for (const auto& [reason, n] : poller.Latest()->errors) errors_after += n;
  EXPECT_EQ(errors_after, errors_before + 1);
}

TEST(IsGpuResourceTest, DevicePluginNames) {
  EXPECT_TRUE(IsGpuResource("nvidia.com/gpu"));
  EXPECT_TRUE(IsGpuResource("amd.com/gpu"));
  EXPECT_TRUE(IsGpuResource("nvidia.com/mig-3g.40gb"));
  EXPECT_FALSE(IsGpuResource("nvidia.com/gpu.shared-bogus"));
  EXPECT_FALSE(IsGpuResource("rdma/hca_shared_devices_a"));
  EXPECT_FALSE(IsGpuResource("gpu"));
}

TEST_F(AttributionPollerTest, NoSelectionNoReads) {
  AttributionPoller poller = MakePoller();
  poller.PollOnce();
  EXPECT_TRUE(poller.Latest()->rows.empty());
  EXPECT_EQ(poller.Latest()->reads, 0u);
  EXPECT_EQ(calls_.dumps, 0);
}

}  // namespace
}  // namespace roceqos
