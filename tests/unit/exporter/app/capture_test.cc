// --replay's reading of the bundle (exporter/app/capture.h StartReplayFrom).

#include "exporter/app/capture.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include "collectors/capture/tape.h"
#include "collectors/capture/tape_bundle.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;

class ReplayFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "roceqos_replay_XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr) << std::strerror(errno);
    dir_ = templ;
  }
  void TearDown() override {
    tape::Reset();
    std::filesystem::remove_all(dir_);
  }

  // StartReplayFrom under a deadline: one blocked on a FIFO cannot be stopped, so past it the
  // process ends with a message rather than stalling the suite. Returns the exit code.
  int ReplayWithin(const std::string& path) {
    Config config;
    config.replay_path = path;
    auto starting = std::async(std::launch::async, [this, config]() mutable {
      std::ostringstream err;
      const int code = StartReplayFrom(config, err);
      err_ = err.str();
      return code;
    });
    if (starting.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      std::fprintf(stderr, "StartReplayFrom(%s) is still running after 10 s\n", path.c_str());
      std::_Exit(1);
    }
    return starting.get();
  }

  std::string dir_;
  std::string err_;
};

TEST_F(ReplayFileTest, AFifoIsRefusedWithoutWaitingForAWriter) {
  const std::string fifo = dir_ + "/node.capture";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_EQ(ReplayWithin(fifo), 2);
  EXPECT_EQ(err_, "roce_qos_exporter: --replay " + fifo + ": not a regular file (a FIFO)\n");
  EXPECT_EQ(tape::CurrentMode(), tape::Mode::kLive);
}

TEST_F(ReplayFileTest, ADeviceIsRefusedBeforeAnythingIsRead) {
  EXPECT_EQ(ReplayWithin("/dev/zero"), 2);
  EXPECT_EQ(err_,
            "roce_qos_exporter: --replay /dev/zero: not a regular file (a character device)\n");
}

// A sparse file one byte past the bound: refused by its size, without reading 64 MiB of zeros.
TEST_F(ReplayFileTest, ABundleBeyondTheBoundIsRefusedByItsSize) {
  const std::string path = dir_ + "/huge.capture";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(tape::kMaxBundleBytes) + 1), 0);
  ::close(fd);
  EXPECT_EQ(ReplayWithin(path), 2);
  EXPECT_EQ(err_, "roce_qos_exporter: --replay " + path +
                      ": 67108865 bytes, larger than the limit of 67108864 bytes\n");
  EXPECT_EQ(tape::CurrentMode(), tape::Mode::kLive);
}

// The bound is far above every committed capture, and a symlink to one is followed.
TEST_F(ReplayFileTest, TheCommittedCapturesAreWellWithinTheBound) {
  const std::filesystem::path fixtures =
      std::filesystem::path(ROCEQOS_SOURCE_DIR) / "tests/fixtures/replay";
  int bundles = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(fixtures)) {
    if (entry.path().filename() != "bundle.txt") continue;
    ++bundles;
    EXPECT_LT(entry.file_size() * 16, tape::kMaxBundleBytes) << entry.path();
  }
  EXPECT_GT(bundles, 0);
  const std::string link = dir_ + "/node.capture";
  std::filesystem::create_symlink(fixtures / "6.12/bundle.txt", link);
  EXPECT_EQ(ReplayWithin(link), 0) << err_;
  EXPECT_EQ(tape::CurrentMode(), tape::Mode::kReplay);
}

// A bundle whose manifest holds the capture's selection flags, and none of the kernel's answers.
std::string BundleWithSelection(const std::string& dir, bool with_selection) {
  tape::Bundle bundle;
  bundle.meta.emplace_back("format", "roce-qos-capture 1");
  if (with_selection) {
    bundle.meta.emplace_back(std::string(kMetaDeviceInclude), "veth[0-9]+");
    bundle.meta.emplace_back(std::string(kMetaDeviceExclude), "veth9");
  }
  const std::string path = dir + (with_selection ? "/selection.capture" : "/old.capture");
  std::ofstream(path) << tape::Serialize(bundle);
  return path;
}

TEST_F(ReplayFileTest, TheCapturedSelectionSelectsOnReplay) {
  Config config;
  config.replay_path = BundleWithSelection(dir_, true);
  std::ostringstream err;
  ASSERT_EQ(StartReplayFrom(config, err), 0) << err.str();
  EXPECT_EQ(config.device_include, "veth[0-9]+");
  EXPECT_EQ(config.device_exclude, "veth9");
}

TEST_F(ReplayFileTest, TheCommandLineSelectionWinsOverTheCaptured) {
  Config config;
  config.replay_path = BundleWithSelection(dir_, true);
  config.device_include = "ens.*";
  std::ostringstream err;
  ASSERT_EQ(StartReplayFrom(config, err), 0) << err.str();
  EXPECT_EQ(config.device_include, "ens.*");
  EXPECT_EQ(config.device_exclude, "veth9");  // not given here: the capture's
}

TEST_F(ReplayFileTest, ABundleWithoutSelectionKeepsTheDefault) {
  Config config;
  config.replay_path = BundleWithSelection(dir_, false);
  std::ostringstream err;
  ASSERT_EQ(StartReplayFrom(config, err), 0) << err.str();
  EXPECT_FALSE(config.device_include.has_value());
  EXPECT_FALSE(config.device_exclude.has_value());
  // The committed captures predate the keys: they still load, with the default selection.
  const std::filesystem::path fixtures =
      std::filesystem::path(ROCEQOS_SOURCE_DIR) / "tests/fixtures/replay";
  Config old;
  old.replay_path = fixtures / "6.12/bundle.txt";
  ASSERT_EQ(StartReplayFrom(old, err), 0) << err.str();
  EXPECT_FALSE(old.device_include.has_value());
}

// A wrong --output fails at once, before any sample, with the path and the reason.
TEST_F(ReplayFileTest, CaptureToAMissingDirectoryNamesThePathAndReason) {
  CaptureOptions options;
  options.output = dir_ + "/nonexistent/x";
  std::ostringstream out, err;
  EXPECT_EQ(RunCapture(Config{}, options, out, err), 2);
  EXPECT_EQ(err.str(), "roce_qos_exporter capture: --output " + options.output +
                           ": No such file or directory\n");
  EXPECT_EQ(tape::CurrentMode(), tape::Mode::kLive) << "nothing was recorded";
}

TEST_F(ReplayFileTest, AMissingBundleNamesThePath) {
  EXPECT_EQ(ReplayWithin(dir_ + "/none.capture"), 2);
  EXPECT_THAT(err_, HasSubstr(dir_ + "/none.capture: cannot open: No such file or directory"));
}

}  // namespace
}  // namespace roceqos
