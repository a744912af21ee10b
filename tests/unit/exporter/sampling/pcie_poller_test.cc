#include "exporter/sampling/pcie_poller.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// Two mlx5 functions under one root port, as /sys lays them out, and a veth.
class PciePollerTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / ("roceqos_pciepoll_" + std::to_string(::getpid()) + "_" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    bridge_ = root_ / "devices/pci0000:00/0000:00:02.0";
    fs::create_directories(root_ / "class/net");
    AddFunction("0000:3b:00.0", "eth0");
    AddFunction("0000:3b:00.1", "eth1");
    fs::create_directories(root_ / "devices/virtual/net/veth0");
    fs::create_symlink("../../devices/virtual/net/veth0", root_ / "class/net/veth0");
    Write(bridge_ / "max_link_speed", "16.0 GT/s PCIe\n");
    Write(bridge_ / "aer_dev_fatal", "TOTAL_ERR_FATAL 0\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  void AddFunction(const std::string& bdf, const std::string& netdev) {
    const fs::path function = bridge_ / bdf;
    fs::create_directories(function / "net" / netdev);
    fs::create_symlink("../../../" + bdf, function / "net" / netdev / "device");
    fs::create_symlink(fs::relative(function / "net" / netdev, root_ / "class/net"),
                       root_ / "class/net" / netdev);
    Write(function / "current_link_speed", "16.0 GT/s PCIe\n");
    Write(function / "current_link_width", "16\n");
    Write(function / "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL 0\n");
  }
  static void Write(const fs::path& p, std::string_view content) { std::ofstream(p) << content; }

  PciePoller MakePoller() {
    return PciePoller({.interval = std::chrono::seconds(30), .sysfs_root = root_.string()},
                      [this] { return netdevs_; });
  }

  fs::path root_, bridge_;
  std::vector<std::string> netdevs_ = {"eth0", "eth1", "veth0"};
};

TEST_F(PciePollerTest, NothingBeforeTheFirstRound) {
  PciePoller poller = MakePoller();
  EXPECT_EQ(poller.Latest(), nullptr);
}

TEST_F(PciePollerTest, PublishesEveryPciNetdevAndLeavesOutTheOthers) {
  PciePoller poller = MakePoller();
  poller.PollOnce();
  auto state = poller.Latest();
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->links.size(), 2u);  // veth0 has no PCI function: no entry, no error
  ASSERT_TRUE(state->links.contains("eth1"));
  const PcieLink& eth1 = state->links.at("eth1");
  EXPECT_EQ(eth1.function.address, "0000:3b:00.1");
  ASSERT_TRUE(eth1.upstream);
  EXPECT_EQ(eth1.upstream->aer_fatal, 0u);
  EXPECT_EQ(eth1.function.aer_nonfatal, 0u);
  EXPECT_EQ(state->reads, 3u);
  EXPECT_EQ(state->errors.at("malformed"), 0u);
  EXPECT_DOUBLE_EQ(state->interval_seconds, 30);
}

TEST_F(PciePollerTest, AFailedReadLeavesNoStaleLinkAndIsCounted) {
  PciePoller poller = MakePoller();
  poller.PollOnce();
  Write(bridge_ / "0000:3b:00.0/current_link_width", "sixteen\n");
  poller.PollOnce();
  auto state = poller.Latest();
  ASSERT_NE(state, nullptr);
  EXPECT_FALSE(state->links.contains("eth0"));
  EXPECT_TRUE(state->links.contains("eth1"));
  EXPECT_EQ(state->errors.at("malformed"), 1u);
  EXPECT_EQ(state->reads, 6u);
}

TEST_F(PciePollerTest, ANetdevThatLeftTheSelectionIsDropped) {
  PciePoller poller = MakePoller();
  poller.PollOnce();
  netdevs_ = {"eth1"};
  poller.PollOnce();
  auto state = poller.Latest();
  ASSERT_NE(state, nullptr);
  EXPECT_FALSE(state->links.contains("eth0"));
  EXPECT_TRUE(state->links.contains("eth1"));
}

}  // namespace
}  // namespace roceqos
