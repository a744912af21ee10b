#include "collectors/cgroup_owner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace roceqos {
namespace {

using ::testing::HasSubstr;

constexpr char kUid[] = "0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b";
constexpr char kUidUnderscored[] = "0f4a1c2e_7b3d_4e5f_9a8b_1c2d3e4f5a6b";
constexpr char kId[] = "3b9f2c1d4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c";

std::string Sub(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

/// Fills UID (underscored for systemd slices, dashed otherwise) and ID into a template.
std::string Shape(const std::string& tmpl) {
  return Sub(Sub(Sub(tmpl, "UID_", kUidUnderscored), "UID", kUid), "ID", kId);
}

CgroupOwner Parsed(const std::string& text) {
  Result<CgroupOwner> owner = ParseCgroupOwner(text);
  EXPECT_TRUE(owner.ok()) << (owner.ok() ? "" : owner.error().message);
  return owner.ok() ? *owner : CgroupOwner{};
}

TEST(CgroupOwnerTest, SystemdDriverV2Containerd) {
  CgroupOwner owner =
      Parsed(Shape("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podUID_.slice/"
                   "cri-containerd-ID.scope\n"));
  EXPECT_EQ(owner.kind, CgroupOwnerKind::kPod);
  EXPECT_EQ(owner.pod_uid, kUid);
  EXPECT_EQ(owner.container_id, kId);
  EXPECT_EQ(owner.runtime, "containerd");
  EXPECT_EQ(owner.qos, PodQosClass::kBurstable);
}

TEST(CgroupOwnerTest, SystemdDriverCrioBestEffortAndGuaranteedDocker) {
  CgroupOwner crio =
      Parsed(Shape("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podUID_.slice/"
                   "crio-ID.scope\n"));
  EXPECT_EQ(crio.runtime, "cri-o");
  EXPECT_EQ(crio.qos, PodQosClass::kBestEffort);
  EXPECT_EQ(crio.container_id, kId);
  // Guaranteed pods sit directly under kubepods.slice.
  CgroupOwner docker = Parsed(Shape("0::/kubepods.slice/kubepods-podUID_.slice/docker-ID.scope\n"));
  EXPECT_EQ(docker.kind, CgroupOwnerKind::kPod);
  EXPECT_EQ(docker.pod_uid, kUid);
  EXPECT_EQ(docker.runtime, "docker");
  EXPECT_EQ(docker.qos, PodQosClass::kGuaranteed);
}

TEST(CgroupOwnerTest, CrioConmonIsThePodWithoutAContainer) {
  CgroupOwner owner =
      Parsed(Shape("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podUID_.slice/"
                   "crio-conmon-ID.scope\n"));
  EXPECT_EQ(owner.kind, CgroupOwnerKind::kPod);
  EXPECT_EQ(owner.pod_uid, kUid);
  EXPECT_EQ(owner.container_id, "");
  EXPECT_EQ(owner.runtime, "");
}

TEST(CgroupOwnerTest, CgroupfsDriverV1PicksThePodOverTheSystemdHierarchy) {
  // A cgroup v1 node (hybrid): name=systemd shows the kubelet's unit-less path, the controllers
  // the pod's.
  CgroupOwner owner =
      Parsed(Shape("12:pids:/kubepods/burstable/podUID/ID\n"
                   "11:memory:/kubepods/burstable/podUID/ID\n"
                   "4:cpu,cpuacct:/kubepods/burstable/podUID/ID\n"
                   "1:name=systemd:/kubepods/burstable/podUID/ID\n"
                   "0::/system.slice/containerd.service\n"));
  EXPECT_EQ(owner.kind, CgroupOwnerKind::kPod);
  EXPECT_EQ(owner.pod_uid, kUid);
  EXPECT_EQ(owner.container_id, kId);
  EXPECT_EQ(owner.runtime, "");
  EXPECT_EQ(owner.qos, PodQosClass::kBurstable);

  CgroupOwner guaranteed = Parsed(Shape("0::/kubepods/podUID/ID\n"));
  EXPECT_EQ(guaranteed.qos, PodQosClass::kGuaranteed);
  EXPECT_EQ(guaranteed.container_id, kId);
}

TEST(CgroupOwnerTest, CgroupNamespaceRelativePathAndStaticPodUid) {
  // Read from inside a private cgroup namespace, the path climbs out of the reader's root.
  CgroupOwner relative =
      Parsed(Shape("0::/../../kubepods-besteffort-podUID_.slice/cri-containerd-ID.scope\n"));
  EXPECT_EQ(relative.kind, CgroupOwnerKind::kPod);
  EXPECT_EQ(relative.pod_uid, kUid);
  EXPECT_EQ(relative.container_id, kId);
  // A static pod's UID is the kubelet's 32-hex config hash.
  CgroupOwner static_pod = Parsed(Shape(
      "0::/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod6d8a1e0f2b3c4d5e6f708192a3b4c5d6.slice/cri-containerd-ID.scope"));
  EXPECT_EQ(static_pod.pod_uid, "6d8a1e0f2b3c4d5e6f708192a3b4c5d6");
}

TEST(CgroupOwnerTest, PodCgroupItselfHasNoContainer) {
  CgroupOwner owner =
      Parsed(Shape("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podUID_.slice"));
  EXPECT_EQ(owner.kind, CgroupOwnerKind::kPod);
  EXPECT_EQ(owner.container_id, "");
}

TEST(CgroupOwnerTest, SlurmV2) {
  CgroupOwner owner = Parsed("0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_3\n");
  EXPECT_EQ(owner.kind, CgroupOwnerKind::kSlurmJob);
  EXPECT_EQ(owner.slurm_job, "4242");
  EXPECT_EQ(owner.slurm_step, "0");
  CgroupOwner batch =
      Parsed("0::/system.slice/node07_slurmstepd.scope/job_17/step_batch/user/task_0");
  EXPECT_EQ(batch.slurm_job, "17");
  EXPECT_EQ(batch.slurm_step, "batch");
  // slurmstepd's own processes: the scope is a unit, not a job.
  CgroupOwner stepd = Parsed("0::/system.slice/slurmstepd.scope/system\n");
  EXPECT_EQ(stepd.kind, CgroupOwnerKind::kSystemdUnit);
  EXPECT_EQ(stepd.systemd_unit, "slurmstepd.scope");
}

TEST(CgroupOwnerTest, SlurmV1OnlyOnItsControllers) {
  // Slurm's v1 plugin manages freezer, cpuset, memory and devices; pids and name=systemd still
  // show slurmd's unit. The job must win over the unit.
  CgroupOwner owner = Parsed(
      "10:pids:/system.slice/slurmd.service\n"
      "9:freezer:/slurm/uid_1000/job_88/step_extern/task_0\n"
      "7:memory:/slurm/uid_1000/job_88/step_extern/task_0\n"
      "3:cpuset:/slurm/uid_1000/job_88/step_extern\n"
      "1:name=systemd:/system.slice/slurmd.service\n");
  EXPECT_EQ(owner.kind, CgroupOwnerKind::kSlurmJob);
  EXPECT_EQ(owner.slurm_job, "88");
  EXPECT_EQ(owner.slurm_step, "extern");
  CgroupOwner multi = Parsed("4:freezer:/slurm_node07/uid_0/job_9/step_12\n");
  EXPECT_EQ(multi.slurm_job, "9");
  EXPECT_EQ(multi.slurm_step, "12");
  CgroupOwner job_only = Parsed("4:freezer:/slurm/uid_0/job_9\n");
  EXPECT_EQ(job_only.slurm_job, "9");
  EXPECT_EQ(job_only.slurm_step, "");
}

TEST(CgroupOwnerTest, SystemdUnits) {
  EXPECT_EQ(Parsed("0::/system.slice/rping-server.service\n").systemd_unit, "rping-server.service");
  EXPECT_EQ(Parsed("0::/user.slice/user-1000.slice/session-3.scope\n").systemd_unit,
            "session-3.scope");
  EXPECT_EQ(Parsed("0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
                   "app-ib_write_bw@1.service\n")
                .systemd_unit,
            "app-ib_write_bw@1.service");
  EXPECT_EQ(Parsed("0::/init.scope\n").systemd_unit, "init.scope");
}

TEST(CgroupOwnerTest, UnknownShapes) {
  EXPECT_EQ(Parsed("0::/\n").kind, CgroupOwnerKind::kUnknown);
  EXPECT_EQ(Parsed("0::/mygroup/sub\n").kind, CgroupOwnerKind::kUnknown);
  // Near misses stay unknown rather than yielding a wrong ID.
  EXPECT_EQ(Parsed("0::/kubepods/burstable/podnot-a-uid/x\n").kind, CgroupOwnerKind::kUnknown);
  EXPECT_EQ(Parsed("0::/slurm/uid_0/job_12345678901/step_0\n").kind, CgroupOwnerKind::kUnknown);
  EXPECT_EQ(Parsed("0::/slurm/uid_0/job_x1\n").kind, CgroupOwnerKind::kUnknown);
  EXPECT_EQ(Parsed("0::/elsewhere/pod" + std::string(kUid) + "\n").kind, CgroupOwnerKind::kUnknown);
}

TEST(CgroupOwnerTest, InvalidIdsAreDroppedNotKept) {
  // A container level that is not 64 hex: the pod is known, the container is not.
  CgroupOwner owner = Parsed(Shape("0::/kubepods/besteffort/podUID/" + std::string(65, 'a')));
  EXPECT_EQ(owner.kind, CgroupOwnerKind::kPod);
  EXPECT_EQ(owner.container_id, "");
  EXPECT_EQ(Parsed("0::/slurm/uid_0/job_5/step_$(rm)\n").slurm_step, "");
  // A unit name with characters systemd never uses, or too long, is no unit.
  EXPECT_EQ(Parsed("0::/system.slice/a b.service\n").kind, CgroupOwnerKind::kUnknown);
  EXPECT_EQ(Parsed("0::/system.slice/" + std::string(300, 'a') + ".service\n").kind,
            CgroupOwnerKind::kUnknown);
}

TEST(CgroupOwnerTest, UppercaseUidIsNormalised) {
  std::string upper = kUid;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(Parsed("0::/kubepods/pod" + upper + "\n").pod_uid, kUid);
}

TEST(CgroupOwnerTest, MalformedTextIsAClearError) {
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"", "empty"},
           {"garbage\n", "line 1 has no hierarchy-ID:controllers:path form"},
           {"0::/\nx:cpu:/a\n", "line 2: hierarchy ID is not a number"},
           {"0::relative\n", "line 1: path does not start with '/'"},
           {std::string(kMaxProcCgroupBytes + 1, '0'), "more than the"},
       }) {
    Result<CgroupOwner> owner = ParseCgroupOwner(c.text);
    ASSERT_FALSE(owner.ok()) << c.text.substr(0, 40);
    EXPECT_THAT(owner.error().message, HasSubstr(c.message));
    EXPECT_THAT(owner.error().message, HasSubstr("/proc/PID/cgroup"));
  }
}

TEST(CgroupOwnerTest, DeepPathsAreBounded) {
  std::string deep = "0::";
  for (int i = 0; i < 100; ++i) deep += "/d";
  deep += Shape("/kubepods/podUID/ID");
  EXPECT_EQ(Parsed(deep).kind, CgroupOwnerKind::kUnknown);
}

TEST(CgroupOwnerTest, EveryPrefixAndByteFlipStaysBounded) {
  const std::string text = Shape(
      "12:pids:/kubepods/burstable/podUID/ID\n"
      "9:freezer:/slurm/uid_1000/job_88/step_extern/task_0\n"
      "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podUID_.slice/"
      "cri-containerd-ID.scope\n");
  auto check = [](const std::string& input) {
    Result<CgroupOwner> owner = ParseCgroupOwner(input);
    if (!owner.ok()) {
      EXPECT_FALSE(owner.error().message.empty());
      return;
    }
    EXPECT_LE(owner->pod_uid.size(), 36U);
    EXPECT_TRUE(owner->container_id.empty() || owner->container_id.size() == 64U);
    EXPECT_LE(owner->slurm_job.size(), 10U);
    EXPECT_LE(owner->systemd_unit.size(), 255U);
  };
  for (size_t len = 0; len <= text.size(); ++len) check(text.substr(0, len));
  for (size_t at = 0; at < text.size(); ++at) {
    for (char with : {'\0', '\n', ':', '/', '_', 'Z'}) {
      std::string flipped = text;
      flipped[at] = with;
      check(flipped);
    }
  }
}

}  // namespace
}  // namespace roceqos
