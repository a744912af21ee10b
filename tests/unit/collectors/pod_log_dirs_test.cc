#include "collectors/pod_log_dirs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collectors/cgroup_owner.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

constexpr char kUid[] = "0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b";

TEST(PodLogDirsTest, SplitsNamespaceNameAndUid) {
  // kubelet BuildPodLogsDirectory: <namespace>_<name>_<uid>.
  std::optional<PodLogDir> dir = ParsePodLogDirName(std::string("team-a_trainer-0_") + kUid);
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->uid, kUid);
  EXPECT_EQ(dir->pod, (PodName{"team-a", "trainer-0"}));
}

TEST(PodLogDirsTest, DottedPodNamesAndStaticPodUids) {
  // A pod name is a DNS-1123 subdomain (dots allowed); a static pod's UID is a 32-hex hash.
  std::optional<PodLogDir> dir =
      ParsePodLogDirName("kube-system_etcd.node-1.example_d41d8cd98f00b204e9800998ecf8427e");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->pod.name, "etcd.node-1.example");
  EXPECT_EQ(dir->uid, "d41d8cd98f00b204e9800998ecf8427e");
}

TEST(PodLogDirsTest, RefusesWhatTheKubeletDoesNotMake) {
  const std::string uid = kUid;
  for (const std::string& bad : std::vector<std::string>{
           "", ".", "..", "ns_name", "ns_name_", "_name_" + uid, "ns__" + uid,
           "Team_name_" + uid,                              // uppercase namespace
           "ns_Name_" + uid,                                // uppercase name
           "ns_-name_" + uid,                               // label starting with '-'
           "ns_name._" + uid,                               // empty label after a dot
           "ns_name_" + uid + "x",                          // UID too long
           "ns_name_0F4A1C2E-7B3D-4E5F-9A8B-1C2D3E4F5A6B",  // the kubelet writes lowercase
           "ns_name_extra_" + uid,                          // a '_' in the UID part
           std::string(64, 'a') + "_name_" + uid,           // namespace over 63
           "ns_" + std::string(254, 'a') + "_" + uid,       // name over 253
           "ns_" + std::string(64, 'a') + "_" + uid,        // a label over 63 inside the name
       }) {
    EXPECT_FALSE(ParsePodLogDirName(bad)) << bad;
  }
  // 63 and 253 are allowed (253 as labels of at most 63).
  const std::string long_name = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                                std::string(63, 'c') + "." + std::string(61, 'd');
  ASSERT_EQ(long_name.size(), 253u);
  EXPECT_TRUE(ParsePodLogDirName(std::string(63, 'n') + "_" + long_name + "_" + uid));
}

TEST(PodLogDirsTest, UidsJoinWithTheCgroupParser) {
  // The UID the systemd driver's cgroup path gives (dashes escaped as '_') is the same string.
  Result<CgroupOwner> owner = ParseCgroupOwner(
      "0::/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod0f4a1c2e_7b3d_4e5f_9a8b_1c2d3e4f5a6b.slice/"
      "cri-containerd-3b9f2c1d4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c.scope\n");
  ASSERT_TRUE(owner.ok());
  const std::vector<std::string> entries = {std::string("default_rping_") + kUid};
  PodNames names = PodNamesFromEntries(entries);
  ASSERT_TRUE(names.contains(owner->pod_uid));
  EXPECT_EQ(names.at(owner->pod_uid).name, "rping");
}

TEST(PodLogDirsTest, FirstEntryOfAUidWinsAndGarbageIsSkipped) {
  const std::vector<std::string> entries = {"README", std::string("a_one_") + kUid,
                                            std::string("b_two_") + kUid};
  PodNames names = PodNamesFromEntries(entries);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names.begin()->second, (PodName{"a", "one"}));
}

TEST(PodLogDirsTest, ReadsADirectoryAndTreatsAMissingOneAsEmpty) {
  const fs::path root =
      fs::path(::testing::TempDir()) / ("pod_log_dirs_test_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / (std::string("ml_trainer-0_") + kUid) / "trainer");
  std::ofstream(root / (std::string("ml_file_") + kUid));  // a file, not a pod directory
  Result<PodNames> names = ReadPodLogDirs(root.string());
  ASSERT_TRUE(names.ok()) << names.error().message;
  ASSERT_EQ(names->size(), 1u);
  EXPECT_EQ(names->at(kUid), (PodName{"ml", "trainer-0"}));

  Result<PodNames> missing = ReadPodLogDirs((root / "absent").string());
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
  fs::remove_all(root);
}

}  // namespace
}  // namespace roceqos
