#include "exporter/app/task_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace roceqos {
namespace {

using ::testing::HasSubstr;

class ThreadLimitMessageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        std::filesystem::temp_directory_path() / ("task_limits_test." + std::to_string(::getpid()));
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::filesystem::path root_;
};

TEST_F(ThreadLimitMessageTest, NamesTheV1PidsCgroupAndItsFigures) {
  Write(root_ / "self_cgroup",
        "9:name=systemd:/system.slice/x.service\n8:pids:/system.slice/x.service\n");
  Write(root_ / "fs/pids/system.slice/x.service/pids.max", "64\n");
  Write(root_ / "fs/pids/system.slice/x.service/pids.current", "64\n");
  const std::string m =
      ThreadLimitMessage("Resource temporarily unavailable", (root_ / "self_cgroup").string(),
                         (root_ / "fs").string());
  EXPECT_THAT(m, HasSubstr("cannot create a thread (Resource temporarily unavailable)"));
  EXPECT_THAT(m, HasSubstr("pids.max = 64"));
  EXPECT_THAT(m, HasSubstr("64 tasks in it now"));
  EXPECT_THAT(m, HasSubstr("TasksMax="));
  EXPECT_THAT(m, HasSubstr("RLIMIT_NPROC (ulimit -u"));
}

TEST_F(ThreadLimitMessageTest, ReadsTheUnifiedHierarchy) {
  Write(root_ / "self_cgroup", "0::/system.slice/y.service\n");
  Write(root_ / "fs/system.slice/y.service/pids.max", "max\n");
  const std::string m =
      ThreadLimitMessage("EAGAIN", (root_ / "self_cgroup").string(), (root_ / "fs").string());
  EXPECT_THAT(m, HasSubstr("pids.max = max"));
}

TEST_F(ThreadLimitMessageTest, StillNamesTheLimitsWhenNothingIsReadable) {
  const std::string m =
      ThreadLimitMessage("EAGAIN", (root_ / "missing").string(), (root_ / "fs").string());
  EXPECT_THAT(m, HasSubstr("pids.max"));
  EXPECT_THAT(m, HasSubstr("TasksMax"));
  EXPECT_THAT(m, HasSubstr("ulimit -u"));
}

}  // namespace
}  // namespace roceqos
