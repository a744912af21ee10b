#include "collectors/pcie_link.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// drivers/pci/pcie/aer.c output as a 6.1 kernel prints it: named bits, then the total.
constexpr std::string_view kAerCorrectable =
    "RxErr 3\nBadTLP 1\nBadDLLP 0\nRollover 0\nTimeout 2\nNonFatalErr 0\nCorrIntErr 0\n"
    "HeaderOF 0\nTOTAL_ERR_COR 6\n";
constexpr std::string_view kAerFatal =
    "Undefined 0\nDLP 1\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\n"
    "MalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\nAtomicOpBlocked 0\n"
    "TLPBlockedErr 0\nPoisonTLPBlocked 0\nTOTAL_ERR_FATAL 1\n";

TEST(ParsePcieLinkSpeed, EveryKernelSpelling) {
  EXPECT_DOUBLE_EQ(**ParsePcieLinkSpeed("16.0 GT/s PCIe\n"), 16.0);
  EXPECT_DOUBLE_EQ(**ParsePcieLinkSpeed("2.5 GT/s PCIe\n"), 2.5);
  EXPECT_DOUBLE_EQ(**ParsePcieLinkSpeed("8 GT/s\n"), 8.0);  // before 5.2
  EXPECT_FALSE(ParsePcieLinkSpeed("Unknown\n")->has_value());
  EXPECT_FALSE(ParsePcieLinkSpeed("unknown\n")->has_value());
  EXPECT_FALSE(ParsePcieLinkSpeed("Unknown speed\n")->has_value());  // before 5.2
}

TEST(ParsePcieLinkSpeed, GarbageIsAnError) {
  for (std::string_view bad : {"", "\n", "fast\n", "GT/s\n", " GT/s\n", "x GT/s\n", "-8.0 GT/s\n",
                               "0 GT/s\n", "16.0GT/s\n", "1e9 GT/s\n"}) {
    auto parsed = ParsePcieLinkSpeed(bad);
    EXPECT_FALSE(parsed) << bad;
    if (!parsed) {
      EXPECT_EQ(parsed.error().errnum, 0);  // malformed
    }
  }
}

TEST(ParsePcieLinkWidth, LanesAndErrors) {
  EXPECT_EQ(*ParsePcieLinkWidth("16\n"), 16u);
  EXPECT_EQ(*ParsePcieLinkWidth("0\n"), 0u);  // link not trained
  EXPECT_EQ(*ParsePcieLinkWidth("63\n"), 63u);
  EXPECT_FALSE(ParsePcieLinkWidth("64\n"));  // wider than PCI_EXP_LNKSTA_NLW
  EXPECT_FALSE(ParsePcieLinkWidth("x16\n"));
  EXPECT_FALSE(ParsePcieLinkWidth("-1\n"));
  EXPECT_FALSE(ParsePcieLinkWidth(""));
}

TEST(ParseAerTotal, KeepsOnlyTheTotal) {
  EXPECT_EQ(*ParseAerTotal(kAerCorrectable, "ERR_COR"), 6u);
  EXPECT_EQ(*ParseAerTotal(kAerFatal, "ERR_FATAL"), 1u);
  // An unnamed bit that counted is printed with its array's name (aer_stats_dev_attr).
  EXPECT_EQ(*ParseAerTotal("dev_nonfatal_errs_bit[27] 4\nTOTAL_ERR_NONFATAL 4\n", "ERR_NONFATAL"),
            4u);
  EXPECT_EQ(*ParseAerTotal("TOTAL_ERR_COR 18446744073709551615\n", "ERR_COR"),
            18446744073709551615u);
}

TEST(ParseAerTotal, MalformedTextIsAClearError) {
  struct Case {
    std::string_view text, why;
  };
  for (const Case& c :
       {Case{"", "no TOTAL_ERR_COR line"}, Case{"RxErr 3\n", "no TOTAL_ERR_COR line"},
        Case{"TOTAL_ERR_FATAL 1\n", "TOTAL_ERR_FATAL where TOTAL_ERR_COR"},
        Case{"TOTAL_ERR_COR 1\nRxErr 1\n", "a line follows TOTAL_ERR_COR"},
        Case{"RxErr three\nTOTAL_ERR_COR 3\n", "not a decimal count"},
        Case{"RxErr\nTOTAL_ERR_COR 3\n", "is not \"<error> <count>\""},
        Case{"TOTAL_ERR_COR 99999999999999999999\n", "not a decimal count"}}) {
    auto parsed = ParseAerTotal(c.text, "ERR_COR");
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_NE(parsed.error().message.find(c.why), std::string::npos) << parsed.error().message;
  }
}

// A sysfs tree as the kernel lays it out: the function under its root port, under the host
// bridge, and /sys/class/net/<if>/device linking to the function.
class PcieLinkTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / ("roceqos_pcie_" + std::to_string(::getpid()) + "_" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    bridge_ = root_ / "devices/pci0000:00/0000:00:02.0";
    function_ = bridge_ / "0000:3b:00.0";
    fs::create_directories(function_ / "net/eth0");
    fs::create_directories(root_ / "class/net");
    fs::create_symlink("../../devices/pci0000:00/0000:00:02.0/0000:3b:00.0/net/eth0",
                       root_ / "class/net/eth0");
    fs::create_symlink("../../../0000:3b:00.0", function_ / "net/eth0/device");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Write(const fs::path& p, std::string_view content) { std::ofstream(p) << content; }
  static void WriteLink(const fs::path& dir, std::string_view speed, std::string_view max_speed,
                        std::string_view width, std::string_view max_width) {
    Write(dir / "current_link_speed", speed);
    Write(dir / "max_link_speed", max_speed);
    Write(dir / "current_link_width", width);
    Write(dir / "max_link_width", max_width);
  }
  static void WriteAer(const fs::path& dir, int cor, int nonfatal, int fatal) {
    Write(dir / "aer_dev_correctable", "RxErr 0\nTOTAL_ERR_COR " + std::to_string(cor) + "\n");
    Write(dir / "aer_dev_nonfatal", "DLP 0\nTOTAL_ERR_NONFATAL " + std::to_string(nonfatal) + "\n");
    Write(dir / "aer_dev_fatal", "DLP 0\nTOTAL_ERR_FATAL " + std::to_string(fatal) + "\n");
  }
  Result<std::optional<PcieLink>> Read(std::string_view netdev = "eth0") {
    return ReadPcieLink(root_.string(), netdev);
  }

  fs::path root_, bridge_, function_;
};

TEST_F(PcieLinkTest, ReadsTheFunctionAndItsUpstreamPort) {
  WriteLink(function_, "8.0 GT/s PCIe\n", "16.0 GT/s PCIe\n", "8\n", "16\n");
  WriteAer(function_, 6, 0, 1);
  WriteLink(bridge_, "8.0 GT/s PCIe\n", "16.0 GT/s PCIe\n", "8\n", "16\n");
  WriteAer(bridge_, 40, 2, 0);
  auto read = Read();
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(read->has_value());
  const PcieLink& link = **read;
  EXPECT_EQ(link.function.address, "0000:3b:00.0");
  EXPECT_EQ(link.function.speed_gts, 8.0);
  EXPECT_EQ(link.function.width, 8u);
  EXPECT_EQ(link.function.aer_correctable, 6u);
  EXPECT_EQ(link.function.aer_nonfatal, 0u);
  EXPECT_EQ(link.function.aer_fatal, 1u);
  ASSERT_TRUE(link.upstream);
  EXPECT_EQ(link.upstream->address, "0000:00:02.0");
  EXPECT_EQ(link.upstream->aer_correctable, 40u);
  EXPECT_EQ(link.upstream->aer_nonfatal, 2u);
  EXPECT_EQ(link.LinkMaxSpeedGts(), 16.0);
  EXPECT_EQ(link.LinkMaxWidth(), 16u);
}

TEST_F(PcieLinkTest, TheSlowerEndBoundsTheLinkMaximum) {
  // A Gen4 x16 NIC in a Gen3 x8 slot: trained at the slot's best is not degraded.
  WriteLink(function_, "8.0 GT/s PCIe\n", "16.0 GT/s PCIe\n", "8\n", "16\n");
  WriteLink(bridge_, "8.0 GT/s PCIe\n", "8.0 GT/s PCIe\n", "8\n", "8\n");
  auto read = Read();
  ASSERT_TRUE(read && read->has_value());
  EXPECT_EQ((*read)->LinkMaxSpeedGts(), 8.0);
  EXPECT_EQ((*read)->LinkMaxWidth(), 8u);
}

TEST_F(PcieLinkTest, MissingFilesAndUnknownSpeedAreAbsent) {
  // No AER statistics (the kernel hides the files), no upstream link files, an unknown speed.
  WriteLink(function_, "Unknown\n", "16.0 GT/s PCIe\n", "16\n", "0\n");
  auto read = Read();
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(read->has_value());
  const PcieLink& link = **read;
  EXPECT_FALSE(link.function.speed_gts);
  EXPECT_FALSE(link.function.aer_correctable);
  EXPECT_FALSE(link.function.aer_fatal);
  ASSERT_TRUE(link.upstream);
  EXPECT_FALSE(link.upstream->max_speed_gts);
  EXPECT_EQ(link.LinkMaxSpeedGts(), 16.0);  // the function's alone
  EXPECT_FALSE(link.LinkMaxWidth());        // max_link_width 0: not said
}

TEST_F(PcieLinkTest, NoUpstreamPortUnderAHostBridge) {
  // A function directly on the root bus (a VM's emulated NIC): its parent is pci0000:00.
  const fs::path top = root_ / "devices/pci0000:00/0000:00:03.0";
  fs::create_directories(top / "net/eth1");
  fs::create_symlink("../../devices/pci0000:00/0000:00:03.0/net/eth1", root_ / "class/net/eth1");
  fs::create_symlink("../../../0000:00:03.0", top / "net/eth1/device");
  WriteLink(top, "2.5 GT/s PCIe\n", "2.5 GT/s PCIe\n", "1\n", "1\n");
  auto read = Read("eth1");
  ASSERT_TRUE(read && read->has_value());
  EXPECT_FALSE((*read)->upstream);
  EXPECT_EQ((*read)->function.speed_gts, 2.5);
}

TEST_F(PcieLinkTest, ANetdevWithoutAPciFunctionIsAbsent) {
  fs::create_directories(root_ / "devices/virtual/net/veth0");
  fs::create_symlink("../../devices/virtual/net/veth0", root_ / "class/net/veth0");
  auto veth = Read("veth0");
  ASSERT_TRUE(veth);
  EXPECT_FALSE(veth->has_value());
  auto gone = Read("nosuch0");
  ASSERT_TRUE(gone);
  EXPECT_FALSE(gone->has_value());
}

TEST_F(PcieLinkTest, AMalformedFileIsAnErrorThatNamesIt) {
  WriteLink(function_, "8.0 GT/s PCIe\n", "16.0 GT/s PCIe\n", "8\n", "16\n");
  Write(bridge_ / "aer_dev_fatal", "garbage\n");
  auto read = Read();
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().errnum, 0);  // malformed, not a failed read
  EXPECT_NE(read.error().message.find("0000:00:02.0/aer_dev_fatal"), std::string::npos)
      << read.error().message;
}

}  // namespace
}  // namespace roceqos
