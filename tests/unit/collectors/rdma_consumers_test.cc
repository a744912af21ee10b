#include "collectors/rdma_consumers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace roceqos {
namespace {

namespace fs = std::filesystem;

class ProcCgroupOwnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("rdma_consumers_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(uint32_t pid, const std::string& text) {
    fs::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "cgroup") << text;
  }
  fs::path root_;
};

TEST_F(ProcCgroupOwnerTest, ReadsTheOwnerOfAPid) {
  Write(4100, "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n");
  Result<std::optional<CgroupOwner>> owner = ReadProcCgroupOwner(root_.string(), 4100);
  ASSERT_TRUE(owner.ok()) << owner.error().message;
  ASSERT_TRUE(owner->has_value());
  EXPECT_EQ((*owner)->kind, CgroupOwnerKind::kSlurmJob);
  EXPECT_EQ((*owner)->slurm_job, "77");
}

TEST_F(ProcCgroupOwnerTest, AVanishedPidIsAbsentNotAnError) {
  fs::create_directories(root_);
  Result<std::optional<CgroupOwner>> owner = ReadProcCgroupOwner(root_.string(), 4242);
  ASSERT_TRUE(owner.ok());
  EXPECT_FALSE(owner->has_value());
}

TEST_F(ProcCgroupOwnerTest, TextThatIsNotProcCgroupIsAnError) {
  Write(5, "not a cgroup file\n");
  Result<std::optional<CgroupOwner>> owner = ReadProcCgroupOwner(root_.string(), 5);
  ASSERT_FALSE(owner.ok());
  EXPECT_NE(owner.error().message.find("/5/cgroup"), std::string::npos);
}

TEST_F(ProcCgroupOwnerTest, AnOversizedFileIsRefused) {
  Write(6, "0::/" + std::string(kMaxProcCgroupBytes + 10, 'a') + "\n");
  EXPECT_FALSE(ReadProcCgroupOwner(root_.string(), 6).ok());
}

}  // namespace
}  // namespace roceqos
