#include "exporter/app/enforcer_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace roceqos {
namespace {

std::string LockPath(const std::string& name) {
  return ::testing::TempDir() + "/enforcer_lock_" + std::to_string(getpid()) + "/" + name;
}

TEST(EnforcerLock, SecondInstanceIsRefusedAndToldWhoHoldsIt) {
  const std::string path = LockPath("enforce.lock");
  auto first = EnforcerLock::Acquire(path);  // creates the directory too
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->held());
  // flock(2) conflicts between open file descriptions, even of one process: a second exporter.
  auto second = EnforcerLock::Acquire(path);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(second->held());
  EXPECT_EQ(second->holder(), std::to_string(getpid()));

  *first = EnforcerLock();  // the holder stops
  auto third = EnforcerLock::Acquire(path);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->held());
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(EnforcerLock, AKilledHolderLeavesNoStaleLock) {
  const std::string path = LockPath("killed.lock");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = EnforcerLock::Acquire(path);
    char c = lock.ok() && lock->held() ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    pause();  // held until SIGKILL
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto refused = EnforcerLock::Acquire(path);
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->held());
  EXPECT_EQ(refused->holder(), std::to_string(child));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  auto after = EnforcerLock::Acquire(path);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->held()) << "the kernel released the dead holder's flock";
  close(ready[0]);
  close(ready[1]);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(EnforcerLock, UncreatableDirectoryIsAClearError) {
  auto lock = EnforcerLock::Acquire("/proc/self/no/such/dir/enforce.lock");
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.error().message.find("--remediation.lock-file"), std::string::npos);
}

}  // namespace
}  // namespace roceqos
