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
#include "exporter/app/check.h"
#include "exporter/app/subcommands.h"

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

// The manifest of a capture run with the given settings, and none of the kernel's answers.
tape::Bundle Manifest(std::vector<std::pair<std::string_view, std::string>> meta) {
  tape::Bundle bundle;
  for (auto& [key, value] : meta) bundle.meta.emplace_back(std::string(key), std::move(value));
  return bundle;
}

constexpr std::string_view kCapturedYaml = "defaults: {tcp_ecn: 2}\n";

TEST(CapturedRun, TheCapturedPolicyIsUsedUnderItsPath) {
  Config config;
  Result<CapturedRun> run = ApplyCapturedRun(Manifest({{kMetaConfig, "/etc/roce-qos/policy.yaml"},
                                                       {kMetaPolicy, std::string(kCapturedYaml)}}),
                                             config);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->policy_from, "capture");
  EXPECT_EQ(config.config_path, "/etc/roce-qos/policy.yaml");
  EXPECT_FALSE(run->captured_config.has_value());
  // The file is not on this host: the policy comes from the bundle, named as check named it.
  Result<std::shared_ptr<const PolicySet>> policy = LoadConfiguredPolicy(config);
  ASSERT_TRUE(policy) << policy.error().message;
  EXPECT_EQ((*policy)->source, "/etc/roce-qos/policy.yaml");
  EXPECT_EQ((*policy)->defaults.tcp_ecn, 2);
}

TEST(CapturedRun, AnExplicitConfigOverridesTheCapturedPolicy) {
  Config config;
  config.config_path = "site.yaml";
  Result<CapturedRun> run = ApplyCapturedRun(Manifest({{kMetaConfig, "/etc/roce-qos/policy.yaml"},
                                                       {kMetaPolicy, std::string(kCapturedYaml)}}),
                                             config);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->policy_from, "command line");
  EXPECT_EQ(config.config_path, "site.yaml");
  EXPECT_FALSE(config.policy_yaml.has_value());
  EXPECT_EQ(run->captured_config, "/etc/roce-qos/policy.yaml");
  // Over a capture of the embedded default, too.
  Config over_default;
  over_default.config_path = "site.yaml";
  run = ApplyCapturedRun(Manifest({{kMetaConfig, std::string(kEmbeddedDefaultConfig)}}),
                         over_default);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->captured_config, "embedded default");
}

TEST(CapturedRun, AnOldBundleCapturedWithAPolicyFileNeedsConfig) {
  const tape::Bundle old = Manifest({{kMetaConfig, "/etc/roce-qos/policy.yaml"}});
  Config config;
  Result<CapturedRun> run = ApplyCapturedRun(old, config);
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().message,
            "captured with --config /etc/roce-qos/policy.yaml, whose content the bundle does not "
            "hold (written before captures carried their policy); name that policy with --config");
  config.config_path = "policy.yaml";
  EXPECT_TRUE(ApplyCapturedRun(old, config));
  // Captured with the embedded default (every shipped fixture): the default, as captured.
  Config fixture;
  run = ApplyCapturedRun(Manifest({{kMetaConfig, std::string(kEmbeddedDefaultConfig)}}), fixture);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->policy_from, "embedded default");
  EXPECT_TRUE(fixture.config_path.empty());
}

TEST(CapturedRun, TheCapturedFlagsApplyWhereTheCommandLineLeavesTheDefault) {
  const tape::Bundle bundle = Manifest({{kMetaDeviceInclude, "sim[0-9]"},
                                        {kMetaRawInclude, "rx_.*"},
                                        {kMetaConfigfsTos, "1"},
                                        {kMetaProcfs, "/host/proc"},
                                        {kMetaDebugfs, "/sys/kernel/debug"}});
  Config config;
  Result<CapturedRun> run = ApplyCapturedRun(bundle, config);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(config.device_include, "sim[0-9]");
  EXPECT_EQ(config.raw_include, "rx_.*");
  EXPECT_TRUE(config.qos_configfs_tos);
  EXPECT_EQ(config.procfs_path, "/host/proc");
  EXPECT_EQ(config.debugfs_path, "/sys/kernel/debug");
  EXPECT_THAT(run->flags, ::testing::ElementsAre("--collector.device-include=sim[0-9]",
                                                 "--collector.ethtool.raw-include=rx_.*",
                                                 "--qos.configfs-tos", "--path.procfs=/host/proc",
                                                 "--path.debugfs=/sys/kernel/debug"));
  Config given;
  given.raw_include = "tx_.*";
  given.procfs_path = "/elsewhere";
  run = ApplyCapturedRun(bundle, given);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(given.raw_include, "tx_.*");
  EXPECT_EQ(given.procfs_path, "/elsewhere");
  EXPECT_EQ(run->flags.size(), 3u);
}

TEST(CapturedRun, ASettingThatDoesNotValidateIsAnError) {
  Config config;
  EXPECT_THAT(ApplyCapturedRun(Manifest({{kMetaConfigfsTos, "yes"}}), config).error().message,
              HasSubstr("capture.qos_configfs_tos is \"yes\", not 0 or 1"));
  EXPECT_THAT(ApplyCapturedRun(Manifest({{kMetaProcfs, "proc"}}), config).error().message,
              HasSubstr("not an absolute path"));
  EXPECT_THAT(ApplyCapturedRun(Manifest({{kMetaDebugfs, ""}}), config).error().message,
              HasSubstr("capture.debugfs_path \"\" is not an absolute path"));
  Config fresh;
  EXPECT_THAT(ApplyCapturedRun(Manifest({{kMetaDeviceInclude, "*"}}), fresh).error().message,
              HasSubstr("--collector.device-include: invalid regex"));
}

// The real path on this host: a capture of lo with a policy file and a procfs of the test's own
// (tcp_ecn 2 against the policy's 1: drift) carries both, so the replay checks what the capture
// checked once the file is gone, exit 1 like the capture run's own check.
TEST_F(ReplayFileTest, ACaptureCarriesItsPolicyAndFlagsIntoTheReplayedCheck) {
  std::filesystem::create_directories(dir_ + "/proc/sys/net/ipv4");
  std::ofstream(dir_ + "/proc/sys/net/ipv4/tcp_ecn") << "2\n";
  const std::string policy = dir_ + "/policy.yaml";
  const std::string yaml =
      "defaults: {tcp_ecn: 1}\ndevices:\n  - name: loopback\n    match: {netdev: lo}\n";
  std::ofstream(policy) << yaml;
  Config capture;
  capture.config_path = policy;
  capture.device_include = "lo";
  capture.procfs_path = dir_ + "/proc";
  capture.sampler_period = std::chrono::milliseconds(10);
  CaptureOptions options{.output = dir_ + "/node.capture", .samples = 1};
  std::ostringstream out, err;
  ASSERT_EQ(RunCapture(capture, options, out, err), 0) << err.str();
  std::filesystem::remove(policy);

  Config replay;
  replay.replay_path = options.output;
  ASSERT_EQ(StartReplayFrom(replay, err), 0) << err.str();
  EXPECT_EQ(replay.policy_yaml, yaml);
  EXPECT_EQ(replay.config_path, policy);
  EXPECT_EQ(replay.procfs_path, dir_ + "/proc");
  EXPECT_EQ(replay.device_include, "lo");
  Result<CheckOptions> check = CheckOptionsFromConfig(replay);
  ASSERT_TRUE(check) << check.error().message;
  check->json = true;
  std::ostringstream report, check_err;
  EXPECT_EQ(RunCheck(*check, report, check_err), kCheckDrift) << report.str() << check_err.str();
  EXPECT_THAT(report.str(), HasSubstr("\"policy\":\"" + policy + "\""));
  EXPECT_THAT(report.str(), HasSubstr("\"tcp_ecn\""));
}

}  // namespace
}  // namespace roceqos
