#include "collectors/dcqcn_params.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace roceqos {
namespace {

namespace fs = std::filesystem;

class DcqcnParamsTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / ("roceqos_dcqcn_" + std::to_string(::getpid()) + "_" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "class/net");
  }
  void TearDown() override { fs::remove_all(root_); }
  HostPaths Paths() const {
    HostPaths paths;
    paths.sysfs = root_.string();
    return paths;
  }
  void Write(const std::string& relative, const std::string& content) {
    fs::path p = root_ / "class/net" / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }
  fs::path root_;
};

// MOFED's files with the firmware defaults the simulated NIC also uses.
TEST_F(DcqcnParamsTest, ReadsEveryParameterFileOfBothRoles) {
  const std::pair<const char*, uint64_t> rp[] = {
      {"clamp_tgt_rate", 0}, {"rpg_time_reset", 300}, {"rpg_byte_reset", 32767},
      {"rpg_ai_rate", 5},    {"rpg_hai_rate", 50},    {"rpg_gd", 11},
      {"rpg_min_rate", 1},   {"dce_tcp_g", 1019},     {"initial_alpha_value", 1023}};
  for (auto [name, value] : rp)
    Write(std::string("sim0/ecn/roce_rp/") + name, std::to_string(value) + "\n");
  Write("sim0/ecn/roce_np/min_time_between_cnps", "4\n");
  Write("sim0/ecn/roce_np/cnp_dscp", "48\n");
  Write("sim0/ecn/roce_np/cnp_802p_prio", "6\n");
  Write("sim0/ecn/roce_np/enable/3", "1\n");  // per-priority: HostReader::ReadDcqcn's
  Write("sim0/ecn/roce_rp/enable/3", "1\n");

  auto params = ReadDcqcnParams("sim0", Paths());
  ASSERT_TRUE(params.ok()) << params.error;
  EXPECT_EQ(params.value.reaction_point.size(), std::size(rp));
  for (auto [name, value] : rp) EXPECT_EQ(params.value.reaction_point.at(name), value) << name;
  EXPECT_EQ(params.value.notification_point,
            (std::map<std::string, uint64_t>{
                {"cnp_802p_prio", 6}, {"cnp_dscp", 48}, {"min_time_between_cnps", 4}}));
  EXPECT_TRUE(params.value.errors.empty());
}

TEST_F(DcqcnParamsTest, MissingDirectoryIsAbsent) {
  fs::create_directories(root_ / "class/net/eth0");
  EXPECT_TRUE(ReadDcqcnParams("eth0", Paths()).absent());
  EXPECT_TRUE(ReadDcqcnParams("nosuchdev", Paths()).absent());
}

TEST_F(DcqcnParamsTest, BadFileIsReportedOthersStillRead) {
  Write("sim0/ecn/roce_rp/rpg_gd", "11\n");
  Write("sim0/ecn/roce_rp/rpg_ai_rate", "fast\n");
  Write("sim0/ecn/roce_np/cnp_dscp", "");
  auto params = ReadDcqcnParams("sim0", Paths());
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params.value.reaction_point, (std::map<std::string, uint64_t>{{"rpg_gd", 11}}));
  EXPECT_TRUE(params.value.notification_point.empty());
  ASSERT_EQ(params.value.errors.size(), 2u);
  std::string all = params.value.errors[0] + "\n" + params.value.errors[1];
  EXPECT_NE(all.find("roce_rp/rpg_ai_rate: \"fast\" is not a decimal integer"), std::string::npos)
      << all;
  EXPECT_NE(all.find("roce_np/cnp_dscp: empty"), std::string::npos) << all;
}

TEST(DcqcnParamsParse, AcceptsOnlyDecimalU64) {
  EXPECT_EQ(ParseDcqcnParam("1023\n").value(), 1023u);
  EXPECT_EQ(ParseDcqcnParam(" 0 ").value(), 0u);
  EXPECT_EQ(ParseDcqcnParam("18446744073709551615").value(), UINT64_MAX);
  for (const char* bad : {"", "\n", "-1", "0x10", "12 13", "1e3", "abc"}) {
    auto r = ParseDcqcnParam(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_FALSE(r.error().message.empty());
  }
  EXPECT_EQ(ParseDcqcnParam("18446744073709551616").error().errnum, ERANGE);
}

}  // namespace
}  // namespace roceqos
