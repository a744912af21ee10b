#include "exporter/app/enforcer_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "exporter/app/write_facts_kernel.h"

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

// A fresh directory per test: the lock and what replaces it.
class LockDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/roceqos-lock-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = (dir_ / "enforce.lock").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  EnforcerLock Held() {
    auto lock = EnforcerLock::Acquire(path_);
    EXPECT_TRUE(lock.ok()) << lock.error().message;
    if (!lock.ok()) return EnforcerLock();
    EXPECT_TRUE(lock->held());
    EXPECT_TRUE(lock->StillHeld());
    return std::move(*lock);
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(LockDir, ASymlinkAtTheLockPathIsRefusedWithAClearError) {
  const std::string target = (dir_ / "elsewhere.lock").string();
  std::ofstream(target) << "";
  std::filesystem::create_symlink(target, path_);
  auto lock = EnforcerLock::Acquire(path_);
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.error().message.find("is a symlink"), std::string::npos) << lock.error().message;
  EXPECT_NE(lock.error().message.find(path_), std::string::npos) << lock.error().message;
}

TEST_F(LockDir, StillHeldWhileTheFileIsTheLockedOne) {
  EnforcerLock lock = Held();
  EXPECT_TRUE(lock.StillHeld());
  EXPECT_FALSE(EnforcerLock().StillHeld()) << "a lock never taken is not held";
}

TEST_F(LockDir, ADeletedLockFileIsNoLongerHeld) {
  EnforcerLock lock = Held();
  std::filesystem::remove(path_);
  EXPECT_TRUE(lock.held()) << "the descriptor and its flock are still there";
  EXPECT_FALSE(lock.StillHeld());
  // What the deletion allows: a second instance creates a new file and takes its own lock.
  auto second = EnforcerLock::Acquire(path_);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->held());
  EXPECT_FALSE(lock.StillHeld());
}

TEST_F(LockDir, ALockFileReplacedByAnotherFileIsNoLongerHeld) {
  EnforcerLock lock = Held();
  const std::string other = (dir_ / "other").string();
  std::ofstream(other) << "1\n";
  std::filesystem::rename(other, path_);
  EXPECT_FALSE(lock.StillHeld());
}

TEST_F(LockDir, ALockFileReplacedByASymlinkToItIsNoLongerHeld) {
  EnforcerLock lock = Held();
  // The symlink resolves to the very inode still locked: only a look that does not follow it
  // sees the replacement, which the next Acquire (O_NOFOLLOW) would refuse.
  const std::string moved = (dir_ / "moved.lock").string();
  std::filesystem::rename(path_, moved);
  std::filesystem::create_symlink(moved, path_);
  EXPECT_FALSE(lock.StillHeld());
}

TEST_F(LockDir, ALockDirectoryRemovedWithItsFileIsNoLongerHeld) {
  EnforcerLock lock = Held();
  std::filesystem::remove_all(dir_);  // what systemd's RuntimeDirectory= removal did
  EXPECT_FALSE(lock.StillHeld());
}

TEST_F(LockDir, TheWitnessAsksTheLockEachTime) {
  EnforcerLock lock = Held();
  KernelLockWitness witness(&lock);
  EXPECT_TRUE(witness.StillHeld());
  std::filesystem::remove(path_);
  EXPECT_FALSE(witness.StillHeld());
  KernelLockWitness none(nullptr);
  EXPECT_FALSE(none.StillHeld());
}

}  // namespace
}  // namespace roceqos
