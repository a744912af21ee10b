#include "collectors/gpu_topology.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/support/gpu_topology_fixture.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// --- The machines of tests/fixtures/gpu_topology, against their published matrices. ---

class PublishedMachine : public ::testing::TestWithParam<std::string> {};

TEST_P(PublishedMachine, MatchesThePublishedMatrix) {
  const fs::path dir = fs::path(ROCEQOS_FIXTURES_DIR) / "gpu_topology" / GetParam();
  const testing::PublishedGpuMatrix expected =
      testing::ReadPublishedGpuMatrix(dir / "expected.txt");
  ASSERT_FALSE(expected.netdevs.empty());
  auto topology = ReadGpuTopology((dir / "sys").string(), expected.netdevs);
  ASSERT_TRUE(topology) << topology.error().message;
  ASSERT_EQ(topology->gpus.size(), expected.gpus.size());
  for (size_t g = 0; g < expected.gpus.size(); ++g) {
    EXPECT_EQ(topology->gpus[g].pci_bus_id, expected.gpus[g]);
    EXPECT_EQ(topology->gpus[g].placement.numa_node, expected.gpu_numa[g]) << expected.gpus[g];
  }
  ASSERT_EQ(topology->nics.size(), expected.netdevs.size());
  ASSERT_EQ(topology->pairs.size(), expected.netdevs.size() * expected.gpus.size());
  for (size_t n = 0; n < expected.netdevs.size(); ++n) {
    EXPECT_EQ(topology->nics[n].netdev, expected.netdevs[n]);
    EXPECT_EQ(topology->nics[n].placement.numa_node, expected.nic_numa[n]) << expected.netdevs[n];
    for (size_t g = 0; g < expected.gpus.size(); ++g) {
      const NicGpuRelation& pair = topology->pairs[n * expected.gpus.size() + g];
      EXPECT_EQ(pair.netdev, expected.netdevs[n]);
      EXPECT_EQ(pair.gpu_pci_bus_id, expected.gpus[g]);
      EXPECT_EQ(PcieRelationName(pair.relation), expected.relations[n][g])
          << expected.netdevs[n] << " x " << expected.gpus[g];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuTopology, PublishedMachine,
                         ::testing::Values("dgx_a100", "dgx_h100", "two_socket"));

// --- Each relation, from device paths alone. ---

PciPlacement Place(std::string_view path, std::optional<int> numa) {
  auto placement = ParsePciDevicePath(path);
  EXPECT_TRUE(placement) << path;
  if (!placement) return {};
  placement->numa_node = numa;
  return *placement;
}

TEST(RelatePlacements, EachRelation) {
  // A switch (upstream 0000:16:00.0, downstream ports on bus 17) below root port 0000:15:01.0.
  const std::string sw = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0";
  const PciPlacement nic = Place(sw + "/0000:17:00.0/0000:18:00.0", 0);
  const PciPlacement same_switch = Place(sw + "/0000:17:01.0/0000:1b:00.0", 0);
  // A second-level switch below another downstream port of the same switch.
  const PciPlacement two_switches =
      Place(sw + "/0000:17:02.0/0000:1c:00.0/0000:1d:00.0/0000:1e:00.0", 0);
  const PciPlacement other_root_port =
      Place("/sys/devices/pci0000:15/0000:15:03.0/0000:20:00.0", 0);
  const PciPlacement other_bridge = Place("/sys/devices/pci0000:3d/0000:3d:01.0/0000:3e:00.0", 0);
  const PciPlacement other_socket = Place("/sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0", 1);
  EXPECT_EQ(RelatePlacements(nic, same_switch), PcieRelation::kPix);
  EXPECT_EQ(RelatePlacements(nic, two_switches), PcieRelation::kPxb);
  EXPECT_EQ(RelatePlacements(nic, other_root_port), PcieRelation::kPhb);
  EXPECT_EQ(RelatePlacements(nic, other_bridge), PcieRelation::kNode);
  EXPECT_EQ(RelatePlacements(nic, other_socket), PcieRelation::kSys);
  // Symmetric.
  EXPECT_EQ(RelatePlacements(two_switches, nic), PcieRelation::kPxb);
  EXPECT_EQ(RelatePlacements(other_socket, nic), PcieRelation::kSys);
  // Two functions of one device below one port: no switch between them.
  EXPECT_EQ(RelatePlacements(nic, Place(sw + "/0000:17:00.0/0000:18:00.1", 0)), PcieRelation::kPix);
}

TEST(RelatePlacements, UnknownNumaNode) {
  const PciPlacement a = Place("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", std::nullopt);
  const PciPlacement b = Place("/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", std::nullopt);
  const PciPlacement b_known = Place("/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", 0);
  // Neither has an affinity (a one-node machine): nothing says they are apart.
  EXPECT_EQ(RelatePlacements(a, b), PcieRelation::kNode);
  // One known, one not: nothing says they are together.
  EXPECT_EQ(RelatePlacements(a, b_known), PcieRelation::kSys);
  // Below one host bridge the NUMA node does not matter.
  const PciPlacement c = Place("/sys/devices/pci0000:00/0000:00:02.0/0000:02:00.0", 0);
  EXPECT_EQ(RelatePlacements(a, c), PcieRelation::kPhb);
}

TEST(ParsePciDevicePath, HostBridgeAndChain) {
  auto p = ParsePciDevicePath("/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->host_bridge, "/sys/devices/pci0000:15");
  EXPECT_EQ(p->chain, (std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:00.0"}));
  EXPECT_EQ(p->address, "0000:17:00.0");
  // A VMD domain (5-digit) is a host bridge of its own, below the VMD endpoint.
  auto vmd = ParsePciDevicePath("/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0");
  ASSERT_TRUE(vmd) << vmd.error().message;
  EXPECT_EQ(vmd->host_bridge, "/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0");
  EXPECT_EQ(vmd->chain, (std::vector<std::string>{"10000:e0:06.0"}));
}

TEST(ParsePciDevicePath, NotBelowAHostBridgeIsAnError) {
  for (std::string_view bad :
       {"", "/", "/sys/devices/virtual/net/veth0", "/sys/devices/0000:00:01.0",
        "/sys/devices/pci0000:00", "/sys/devices/pcixyz0:00/0000:00:01.0",
        "/sys/devices/platform/soc/0000:00:01.0", "0000:00:01.0"}) {
    auto p = ParsePciDevicePath(bad);
    ASSERT_FALSE(p) << bad;
    EXPECT_NE(p.error().message.find("not a PCI function below a host bridge"), std::string::npos);
  }
}

TEST(GpuTopologyParsers, NumaNodeClassVendorBusId) {
  EXPECT_EQ(*ParseNumaNode("1\n"), 1);
  EXPECT_EQ(*ParseNumaNode("0\n"), 0);
  EXPECT_FALSE(ParseNumaNode("-1\n")->has_value());
  for (std::string_view bad : {"", "x\n", "-2\n", "1024\n", "1 2\n"})
    EXPECT_FALSE(ParseNumaNode(bad)) << bad;
  EXPECT_EQ(*ParsePciHexId("0x10de\n", 4), 0x10deu);
  EXPECT_EQ(*ParsePciHexId("0x030200\n", 6), 0x030200u);
  for (std::string_view bad : {"", "0x\n", "10de\n", "0x10de0\n", "0xg0de\n", "0x-1\n"})
    EXPECT_FALSE(ParsePciHexId(bad, 4)) << bad;
  EXPECT_TRUE(IsNvidiaGpu(0x10de, 0x0302));
  EXPECT_TRUE(IsNvidiaGpu(0x10de, 0x0300));
  EXPECT_FALSE(IsNvidiaGpu(0x10de, 0x0403));  // the GPU's HDMI audio function
  EXPECT_FALSE(IsNvidiaGpu(0x10de, 0x0680));  // NVSwitch
  EXPECT_FALSE(IsNvidiaGpu(0x1a03, 0x0300));  // ASPEED BMC VGA
  EXPECT_EQ(DcgmPciBusId("0000:3b:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(DcgmPciBusId("10000:e0:06.0"), "00010000:E0:06.0");
  EXPECT_EQ(DcgmPciBusId("3b:00.0"), "");
}

// --- Reading a tree that changes or cannot be read. ---

class GpuTopologyTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("roceqos_gpu_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "bus/pci/devices");
    fs::create_directories(root_ / "class/net");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path Device(const std::string& parent, const std::string& address, const std::string& vendor,
                  const std::string& klass, const std::string& numa) {
    const fs::path rel = fs::path(parent) / address;
    const fs::path dir = root_ / "devices" / rel;
    fs::create_directories(dir);
    std::ofstream(dir / "vendor") << vendor;
    std::ofstream(dir / "class") << klass;
    if (!numa.empty()) std::ofstream(dir / "numa_node") << numa;
    fs::create_symlink(fs::path("../../../devices") / rel, root_ / "bus/pci/devices" / address);
    return dir;
  }
  void Netdev(const fs::path& function, const std::string& name) {
    fs::create_directories(function / "net" / name);
    fs::create_symlink("../../../" + function.filename().string(),
                       function / "net" / name / "device");
    fs::create_symlink(function / "net" / name, root_ / "class/net" / name);
  }
  Result<GpuTopology> Read(const std::vector<std::string>& netdevs) {
    return ReadGpuTopology(root_.string(), netdevs);
  }

  fs::path root_;
};

TEST_F(GpuTopologyTree, AGpuOnTheRootBusHasNoParentBridge) {
  // A VM's passed-through GPU and NIC, both on the emulated root bus.
  Device("pci0000:00", "0000:00:05.0", "0x10de\n", "0x030200\n", "-1\n");
  Netdev(Device("pci0000:00", "0000:00:06.0", "0x15b3\n", "0x020000\n", "-1\n"), "eth0");
  auto topology = Read({"eth0"});
  ASSERT_TRUE(topology) << topology.error().message;
  ASSERT_EQ(topology->gpus.size(), 1u);
  EXPECT_EQ(topology->gpus[0].placement.chain, std::vector<std::string>{"0000:00:05.0"});
  EXPECT_FALSE(topology->gpus[0].placement.numa_node);
  ASSERT_EQ(topology->pairs.size(), 1u);
  EXPECT_EQ(topology->pairs[0].relation, PcieRelation::kPhb);
}

TEST_F(GpuTopologyTree, MissingNumaNodeIsUnknown) {
  // A kernel without CONFIG_NUMA has no numa_node file.
  Device("pci0000:00/0000:00:01.0", "0000:01:00.0", "0x10de\n", "0x030000\n", "");
  Netdev(Device("pci0000:40/0000:40:01.0", "0000:41:00.0", "0x15b3\n", "0x020000\n", ""), "eth0");
  auto topology = Read({"eth0"});
  ASSERT_TRUE(topology) << topology.error().message;
  ASSERT_EQ(topology->pairs.size(), 1u);
  EXPECT_FALSE(topology->nics[0].placement.numa_node);
  EXPECT_EQ(topology->pairs[0].relation, PcieRelation::kNode);
}

TEST_F(GpuTopologyTree, AVanishedDeviceHasNoEntry) {
  const fs::path gpu =
      Device("pci0000:00/0000:00:01.0", "0000:01:00.0", "0x10de\n", "0x030200\n", "0\n");
  Device("pci0000:00/0000:00:02.0", "0000:02:00.0", "0x10de\n", "0x030200\n", "0\n");
  Netdev(Device("pci0000:00/0000:00:03.0", "0000:03:00.0", "0x15b3\n", "0x020000\n", "0\n"),
         "eth0");
  fs::remove_all(gpu);  // hot-removed: bus/pci/devices still links to it
  // eth9 never existed; "../../x" is no netdev name and never leaves class/net.
  auto topology = Read({"eth0", "eth9", "../../x"});
  ASSERT_TRUE(topology) << topology.error().message;
  ASSERT_EQ(topology->gpus.size(), 1u);
  EXPECT_EQ(topology->gpus[0].pci_bus_id, "00000000:02:00.0");
  ASSERT_EQ(topology->nics.size(), 1u);
  ASSERT_EQ(topology->pairs.size(), 1u);
  EXPECT_EQ(topology->pairs[0].relation, PcieRelation::kPhb);
  // No GPU at all: no pairs, not an error.
  fs::remove_all(root_ / "devices/pci0000:00/0000:00:02.0");
  auto none = Read({"eth0"});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->gpus.empty());
  EXPECT_TRUE(none->pairs.empty());
}

TEST_F(GpuTopologyTree, AnUnreadableFileIsAnErrorThatNamesIt) {
  const fs::path gpu =
      Device("pci0000:00/0000:00:01.0", "0000:01:00.0", "0x10de\n", "0x030200\n", "0\n");
  fs::remove(gpu / "class");
  fs::create_directory(gpu / "class");  // read(2) fails with EISDIR
  auto topology = Read({});
  ASSERT_FALSE(topology);
  EXPECT_NE(topology.error().errnum, 0);
  EXPECT_NE(topology.error().message.find("0000:01:00.0/class"), std::string::npos)
      << topology.error().message;
}

TEST_F(GpuTopologyTree, AMalformedFileIsAnErrorThatNamesIt) {
  Netdev(Device("pci0000:00/0000:00:03.0", "0000:03:00.0", "0x15b3\n", "0x020000\n", "zero\n"),
         "eth0");
  auto topology = Read({"eth0"});
  ASSERT_FALSE(topology);
  EXPECT_EQ(topology.error().errnum, 0);  // malformed, not a failed read
  EXPECT_NE(topology.error().message.find("0000:03:00.0/numa_node"), std::string::npos)
      << topology.error().message;
}

}  // namespace
}  // namespace roceqos
