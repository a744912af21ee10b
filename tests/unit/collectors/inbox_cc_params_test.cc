#include "collectors/inbox_cc_params.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "collectors/host.h"
#include "collectors/host_writer.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

constexpr char kPci[] = "0000:3b:00.0";

// A host without MOFED: sim0 is a PCI function, and debugfs holds mlx5_ib's cc_params for it.
class InboxCcParamsTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / ("roceqos_inbox_cc_" + std::to_string(::getpid()) + "_" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    const fs::path function = root_ / "sys/devices/pci0000:3a/0000:3a:00.0" / kPci;
    fs::create_directories(function);
    fs::create_directories(root_ / "sys/bus/pci");
    fs::create_symlink("../../../bus/pci", function / "subsystem");
    fs::create_directories(root_ / "sys/class/net/sim0");
    fs::create_symlink(function, root_ / "sys/class/net/sim0/device");
    fs::create_directories(Dir());
    paths_.sysfs = (root_ / "sys").string();
    paths_.debugfs = (root_ / "debug").string();
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path Dir() const { return root_ / "debug/mlx5" / kPci / "cc_params"; }
  void Write(const std::string& name, const std::string& content) {
    std::ofstream(Dir() / name) << content;
  }
  std::string ReadBack(const std::string& name) {
    std::ifstream in(Dir() / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path root_;
  HostPaths paths_;
};

TEST_F(InboxCcParamsTest, EveryDebugfsFileIsReportedUnderItsMofedName) {
  uint64_t value = 100;
  std::map<std::string, uint64_t> rp, np;
  for (const InboxCcParamName& n : InboxCcParamNames()) {
    Write(std::string(n.debugfs), std::to_string(value) + "\n");  // a distinct value each
    (n.role == DcqcnRole::kReactionPoint ? rp : np)[std::string(n.mofed)] = value++;
  }
  Write("rtt_resp_dscp", "26\n");  // the "general" node: no MOFED counterpart, not read

  auto params = ReadDcqcnParams("sim0", paths_);
  ASSERT_TRUE(params.ok()) << params.error;
  EXPECT_EQ(params.value.source, DcqcnParamsSource::kInboxDebugfs);
  EXPECT_EQ(params.value.reaction_point, rp);
  EXPECT_EQ(params.value.notification_point, np);
  EXPECT_EQ(rp.size(), 16u);
  EXPECT_EQ(np.size(), 4u);
  EXPECT_TRUE(params.value.errors.empty());
}

TEST_F(InboxCcParamsTest, TheMappingCoversEveryMofedNameOnceAndKeepsUpstreamNames) {
  std::set<std::string_view> debugfs, mofed;
  for (const InboxCcParamName& n : InboxCcParamNames()) {
    EXPECT_TRUE(debugfs.insert(n.debugfs).second) << n.debugfs;
    EXPECT_TRUE(mofed.insert(n.mofed).second) << n.mofed;
    const std::string_view prefix =
        n.role == DcqcnRole::kReactionPoint ? std::string_view("rp_") : std::string_view("np_");
    EXPECT_TRUE(n.debugfs.starts_with(prefix)) << n.debugfs;
    EXPECT_EQ(InboxCcParamFile(n.role, n.mofed), n.debugfs);
  }
  EXPECT_EQ(InboxCcParamFile(DcqcnRole::kReactionPoint, "cnp_dscp"), std::nullopt);
  EXPECT_EQ(InboxCcParamFile(DcqcnRole::kNotificationPoint, "../rp_gd"), std::nullopt);
}

TEST_F(InboxCcParamsTest, NotOptedInOrNotPresentIsAbsent) {
  Write("rp_gd", "11\n");
  HostPaths not_opted_in = paths_;
  not_opted_in.debugfs.clear();
  EXPECT_TRUE(ReadDcqcnParams("sim0", not_opted_in).absent());
  EXPECT_TRUE(ReadDcqcnParams("veth0", paths_).absent());  // no PCI function
  fs::remove_all(Dir());
  EXPECT_TRUE(ReadDcqcnParams("sim0", paths_).absent());  // mlx5_ib not loaded
}

TEST_F(InboxCcParamsTest, MofedSysfsWinsOverDebugfs) {
  Write("rp_gd", "11\n");
  fs::create_directories(root_ / "sys/class/net/sim0/ecn/roce_rp");
  std::ofstream(root_ / "sys/class/net/sim0/ecn/roce_rp/rpg_gd") << "7\n";
  auto params = ReadDcqcnParams("sim0", paths_);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params.value.source, DcqcnParamsSource::kMofedSysfs);
  EXPECT_EQ(params.value.reaction_point.at("rpg_gd"), 7u);
}

TEST_F(InboxCcParamsTest, ABadFileIsNamedTheOthersAreRead) {
  Write("rp_gd", "11\n");
  Write("rp_ai_rate", "fast\n");
  auto params = ReadDcqcnParams("sim0", paths_);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params.value.reaction_point, (std::map<std::string, uint64_t>{{"rpg_gd", 11}}));
  ASSERT_EQ(params.value.errors.size(), 1u);
  EXPECT_NE(params.value.errors[0].find("cc_params/rp_ai_rate: \"fast\" is not a decimal"),
            std::string::npos)
      << params.value.errors[0];

  fs::remove(Dir() / "rp_gd");
  auto failed = ReadDcqcnParams("sim0", paths_);
  EXPECT_TRUE(failed.failed()) << "no file read at all is a failed source, not an empty one";
}

TEST_F(InboxCcParamsTest, TheCnpMarkingComesFromDebugfsWithoutMofed) {
  Write("np_cnp_dscp", "48\n");
  Write("np_cnp_prio", "6\n");
  const DcqcnState state = HostReader(paths_).ReadDcqcn("sim0");
  ASSERT_TRUE(state.cnp_dscp.ok()) << state.cnp_dscp.error;
  EXPECT_EQ(state.cnp_dscp.value, 48);
  ASSERT_TRUE(state.cnp_802p_prio.ok());
  EXPECT_EQ(state.cnp_802p_prio.value, 6);
  EXPECT_TRUE(state.np_enabled[3].absent()) << "the inbox driver has no per-priority enable";

  Write("np_cnp_dscp", "64\n");
  EXPECT_TRUE(HostReader(paths_).ReadDcqcn("sim0").cnp_dscp.failed()) << "DSCP is 0..63";
}

TEST_F(InboxCcParamsTest, WritesGoToTheInboxFileOfTheMofedName) {
  Write("np_cnp_prio", "3\n");
  Write("rp_rate_to_set_on_first_cnp", "0\n");
  const HostWriter host(paths_);
  ASSERT_TRUE(host.WriteDcqcnParam("sim0", /*np=*/true, "cnp_802p_prio", 6));
  ASSERT_TRUE(host.WriteDcqcnParam("sim0", /*np=*/false, "rate2set_fcnp", 1000));
  EXPECT_EQ(ReadBack("np_cnp_prio"), "6\n");
  EXPECT_EQ(ReadBack("rp_rate_to_set_on_first_cnp"), "1000\n");

  auto unknown = host.WriteDcqcnParam("sim0", /*np=*/true, "rpg_gd", 1);  // an RP name as NP
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().errnum, ENOENT);
  HostPaths not_opted_in = paths_;
  not_opted_in.debugfs.clear();
  EXPECT_FALSE(HostWriter(not_opted_in).WriteDcqcnParam("sim0", true, "cnp_802p_prio", 6));
  EXPECT_EQ(ReadBack("np_cnp_prio"), "6\n");
}

}  // namespace
}  // namespace roceqos
