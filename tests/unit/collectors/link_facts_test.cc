#include "collectors/link_facts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace roceqos {
namespace {

namespace fs = std::filesystem;

class LinkFactsTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / ("roceqos_link_" + std::to_string(::getpid()) + "_" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "class/net/eth0");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& relative, const std::string& content) {
    fs::path p = root_ / "class/net/eth0" / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }
  LinkFacts Read() { return ReadLinkFacts(root_.string(), "eth0"); }

  fs::path root_;
};

TEST(ParseLinkSpeed, MegabitsAndUnknown) {
  EXPECT_EQ(*ParseLinkSpeed("100000\n"), 100000u);
  EXPECT_EQ(*ParseLinkSpeed("-1\n"), 0u);  // SPEED_UNKNOWN: carrier down
  EXPECT_FALSE(ParseLinkSpeed("fast\n"));
  EXPECT_FALSE(ParseLinkSpeed("-2\n"));
  EXPECT_FALSE(ParseLinkSpeed(""));
}

TEST_F(LinkFactsTest, ReadsSpeedAndVfCount) {
  Write("speed", "200000\n");
  Write("device/sriov_numvfs", "8\n");
  LinkFacts facts = Read();
  ASSERT_TRUE(facts.speed_mbps.ok());
  EXPECT_EQ(facts.speed_mbps.value, 200000u);
  ASSERT_TRUE(facts.sriov_numvfs.ok());
  EXPECT_EQ(facts.sriov_numvfs.value, 8u);
}

TEST_F(LinkFactsTest, MissingFilesAreAbsentNotFailures) {
  LinkFacts facts = Read();
  EXPECT_TRUE(facts.speed_mbps.absent());
  EXPECT_TRUE(facts.sriov_numvfs.absent());
}

TEST_F(LinkFactsTest, GarbageIsAFailureThatNamesTheFile) {
  Write("speed", "100000\n");
  Write("device/sriov_numvfs", "many\n");
  LinkFacts facts = Read();
  EXPECT_TRUE(facts.speed_mbps.ok());
  ASSERT_TRUE(facts.sriov_numvfs.failed());
  EXPECT_NE(facts.sriov_numvfs.error.find("sriov_numvfs"), std::string::npos)
      << facts.sriov_numvfs.error;
}

TEST_F(LinkFactsTest, UnknownSpeedIsNoLink) {
  Write("speed", "-1\n");
  LinkFacts facts = Read();
  ASSERT_TRUE(facts.speed_mbps.ok());
  EXPECT_EQ(facts.speed_mbps.value, 0u);
}

}  // namespace
}  // namespace roceqos
