#include "collectors/discovery.h"

// glibc's net/if.h (if_nametoindex) must precede linux/if.h (libc-compat).
#include <net/if.h>
// clang-format off
#include <linux/if.h>
// clang-format on

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/support/netlink_messages.h"
#include "tests/unit/support/netns.h"

namespace roceqos {
namespace {

// Designated initializers leave the other LinkSpec fields at their defaults on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace fs = std::filesystem;

// linux/if.h flags are enumerators of different enums; OR-ing them as unsigned is what the
// kernel does with ifi_flags.
constexpr unsigned kUp = IFF_UP;
constexpr unsigned kLowerUp = IFF_LOWER_UP;
constexpr unsigned kSlave = IFF_SLAVE;
using netlink::Message;
using netlink::testing::AttrStream;
using netlink::testing::Buffer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct LinkSpec {
  int32_t ifindex = 0;
  std::string name;
  unsigned flags = 0;  // IFF_*
  uint32_t mtu = 1500;
  std::optional<uint8_t> operstate;
  uint32_t master = 0;
  std::string kind;
  std::string slave_kind;
  std::optional<uint32_t> carrier_changes;
  uint32_t link = 0;                     // IFLA_LINK
  std::optional<uint32_t> link_netnsid;  // IFLA_LINK_NETNSID (s32 on the wire)
};

/// An RTM_NEWLINK body (ifinfomsg + attributes) as rtnl_fill_ifinfo lays it out.
Buffer LinkBody(const LinkSpec& spec) {
  Message msg(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  ifi.ifi_index = spec.ifindex;
  ifi.ifi_flags = spec.flags;
  msg.PutHeader(&ifi, sizeof(ifi));
  msg.PutString(IFLA_IFNAME, spec.name);
  msg.PutU32(IFLA_MTU, spec.mtu);
  if (spec.operstate) msg.PutU8(IFLA_OPERSTATE, *spec.operstate);
  if (spec.master != 0) msg.PutU32(IFLA_MASTER, spec.master);
  if (spec.link != 0) msg.PutU32(IFLA_LINK, spec.link);
  if (spec.link_netnsid) msg.PutU32(IFLA_LINK_NETNSID, *spec.link_netnsid);
  msg.PutU32(IFLA_GROUP, 0);  // not in our policy: ignored
  if (spec.carrier_changes) msg.PutU32(IFLA_CARRIER_CHANGES, *spec.carrier_changes);
  if (!spec.kind.empty() || !spec.slave_kind.empty()) {
    size_t info = msg.BeginNest(IFLA_LINKINFO);
    if (!spec.kind.empty()) msg.PutString(IFLA_INFO_KIND, spec.kind);
    if (!spec.slave_kind.empty()) msg.PutString(IFLA_INFO_SLAVE_KIND, spec.slave_kind);
    msg.EndNest(info);
  }
  return AttrStream(msg);
}

Device Link(const LinkSpec& spec) {
  Buffer body = LinkBody(spec);
  Result<Device> device = ParseLinkReply(body);
  EXPECT_TRUE(device) << device.error().message;
  return device ? *device : Device{};
}

RdmaPort Port(uint32_t dev_index, std::string_view dev_name, int32_t ndev_index,
              std::string_view ndev_name) {
  Message msg(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_PORT_GET), 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  msg.PutString(RDMA_NLDEV_ATTR_DEV_NAME, dev_name);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  msg.PutU8(RDMA_NLDEV_ATTR_PORT_STATE, 4);
  msg.PutU8(RDMA_NLDEV_ATTR_PORT_PHYS_STATE, 5);
  if (ndev_index != 0) {
    msg.PutU32(RDMA_NLDEV_ATTR_NDEV_INDEX, static_cast<uint32_t>(ndev_index));
    msg.PutString(RDMA_NLDEV_ATTR_NDEV_NAME, ndev_name);
  }
  Buffer reply = AttrStream(msg);
  Result<RdmaPort> port = ParseRdmaPortReply(reply);
  EXPECT_TRUE(port) << port.error().message;
  return port ? *port : RdmaPort{};
}

const Device* Find(const Inventory& inventory, std::string_view name) {
  for (const Device& device : inventory.devices) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

// --- RTM_NEWLINK ---------------------------------------------------------------------------

TEST(ParseLinkReply, ReadsEveryField) {
  Device device = Link({.ifindex = 8,
                        .name = "eth01",
                        .flags = kUp | kLowerUp | kSlave,
                        .mtu = 1518,
                        .operstate = IF_OPER_UP,
                        .master = 10,
                        .slave_kind = "bond"});
  EXPECT_EQ(device.ifindex, 8);
  EXPECT_EQ(device.name, "eth01");
  EXPECT_TRUE(device.admin_up);
  EXPECT_TRUE(device.carrier);
  EXPECT_EQ(device.mtu, 1518u);
  EXPECT_EQ(OperStateName(device.oper_state), "up");
  EXPECT_EQ(device.master_ifindex, 10);
  EXPECT_EQ(device.master, "");  // resolved by AssembleInventory
  EXPECT_EQ(device.kind, "");
  EXPECT_EQ(device.slave_kind, "bond");
  EXPECT_FALSE(device.carrier_changes.has_value());  // not sent: unknown, not 0
}

TEST(ParseLinkReply, ReadsCarrierChanges) {
  Device device = Link({.ifindex = 3, .name = "eth0", .carrier_changes = 7});
  EXPECT_EQ(device.carrier_changes, 7u);
}

TEST(ParseLinkReply, SpellsOperStatesLikeIpLink) {
  EXPECT_EQ(OperStateName(Link({.ifindex = 2, .name = "a", .operstate = IF_OPER_DOWN}).oper_state),
            "down");
  EXPECT_EQ(OperStateName(
                Link({.ifindex = 2, .name = "a", .operstate = IF_OPER_LOWERLAYERDOWN}).oper_state),
            "lowerlayerdown");
  EXPECT_EQ(
      OperStateName(Link({.ifindex = 2, .name = "a", .operstate = IF_OPER_DORMANT}).oper_state),
      "dormant");
  EXPECT_EQ(OperStateName(Link({.ifindex = 2, .name = "a", .operstate = 42}).oper_state),
            "unknown");
  EXPECT_EQ(OperStateName(Link({.ifindex = 2, .name = "a"}).oper_state), "unknown");
  Device down = Link({.ifindex = 2, .name = "a", .flags = 0});
  EXPECT_FALSE(down.admin_up);
  EXPECT_FALSE(down.carrier);
}

TEST(ParseLinkReply, RejectsMalformedLinks) {
  Buffer tiny(8);
  Result<Device> device = ParseLinkReply(tiny);
  ASSERT_FALSE(device);
  EXPECT_THAT(device.error().message, HasSubstr("struct ifinfomsg"));

  Message no_name(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  no_name.PutHeader(&ifi, sizeof(ifi));
  no_name.PutU32(IFLA_MTU, 1500);
  Buffer no_name_body = AttrStream(no_name);
  device = ParseLinkReply(no_name_body);
  ASSERT_FALSE(device);
  EXPECT_THAT(device.error().message, HasSubstr("missing required attribute IFLA_IFNAME"));

  Message long_name(RTM_NEWLINK, 0);
  long_name.PutHeader(&ifi, sizeof(ifi));
  long_name.PutString(IFLA_IFNAME, "a-name-longer-than-ifnamsiz");
  Buffer long_name_body = AttrStream(long_name);
  device = ParseLinkReply(long_name_body);
  ASSERT_FALSE(device);
  EXPECT_THAT(device.error().message, HasSubstr("IFLA_IFNAME"));

  Message bad_info(RTM_NEWLINK, 0);
  bad_info.PutHeader(&ifi, sizeof(ifi));
  bad_info.PutString(IFLA_IFNAME, "bond0");
  const unsigned char garbage[] = {0x09, 0x00, 0x01, 0x00, 'b', 'o', 'n', 'd'};  // no NUL
  bad_info.Put(IFLA_LINKINFO, garbage, sizeof(garbage));
  Buffer bad_info_body = AttrStream(bad_info);
  device = ParseLinkReply(bad_info_body);
  ASSERT_FALSE(device);
  EXPECT_THAT(device.error().message, HasSubstr("RTM_NEWLINK bond0 IFLA_LINKINFO"));
  EXPECT_THAT(device.error().message, HasSubstr("IFLA_INFO_KIND"));

  Message wide_mtu(RTM_NEWLINK, 0);
  wide_mtu.PutHeader(&ifi, sizeof(ifi));
  wide_mtu.PutString(IFLA_IFNAME, "eth0");
  wide_mtu.PutU64(IFLA_MTU, 1500);
  Buffer wide_mtu_body = AttrStream(wide_mtu);
  device = ParseLinkReply(wide_mtu_body);
  ASSERT_FALSE(device);
  EXPECT_THAT(device.error().message, HasSubstr("IFLA_MTU (type 4)"));
}

// --- Roles, selection, bond and RDMA mapping -----------------------------------------------

Device Pci(Device device, std::string pci, uint32_t vendor, bool vf = false) {
  device.pci_address = std::move(pci);
  device.pci_vendor = vendor;
  device.is_vf = vf;
  return device;
}

// 14_obsidian_notes (b): eth01 (8) and eth02 (9), ConnectX-4 Lx PFs 0000:3b:00.0/.1, are
// enslaved to bond0 (10); `ibdev2netdev` shows "mlx5_bond_0 port 1 ==> bond0".
std::vector<Device> LagHost() {
  return {
      Link({.ifindex = 1, .name = "lo", .flags = kUp | kLowerUp, .mtu = 65536}),
      Pci(Link({.ifindex = 8,
                .name = "eth01",
                .flags = kUp | kLowerUp,
                .mtu = 1518,
                .operstate = IF_OPER_UP,
                .master = 10,
                .slave_kind = "bond"}),
          "0000:3b:00.0", 0x15b3),
      Pci(Link({.ifindex = 9,
                .name = "eth02",
                .flags = kUp | kLowerUp,
                .operstate = IF_OPER_UP,
                .master = 10,
                .slave_kind = "bond"}),
          "0000:3b:00.1", 0x15b3),
      Link({.ifindex = 10,
            .name = "bond0",
            .flags = kUp | kLowerUp,
            .operstate = IF_OPER_UP,
            .kind = "bond"}),
  };
}

TEST(AssembleInventory, MapsTheLagPortToTheReportedSlaveAndToItsBond) {
  // docs/kernel-interfaces.md §8.2: PORT_GET on mlx5_bond_0 names a slave PF netdev, not the bond.
  RdmaPort lag = Port(2, "mlx5_bond_0", 8, "eth01");
  Inventory inventory = AssembleInventory(LagHost(), {lag}, true);

  const Device* eth01 = Find(inventory, "eth01");
  const Device* eth02 = Find(inventory, "eth02");
  const Device* bond0 = Find(inventory, "bond0");
  const Device* lo = Find(inventory, "lo");
  ASSERT_TRUE(eth01 && eth02 && bond0 && lo);
  EXPECT_EQ(eth01->master, "bond0");
  EXPECT_EQ(eth02->master, "bond0");
  EXPECT_EQ(eth01->role, DeviceRole::kBondMember);
  EXPECT_EQ(eth02->role, DeviceRole::kBondMember);
  EXPECT_EQ(bond0->role, DeviceRole::kBond);
  EXPECT_EQ(lo->role, DeviceRole::kOther);
  EXPECT_THAT(eth01->rdma_ports, ElementsAre(lag));
  EXPECT_TRUE(eth02->rdma_ports.empty());
  EXPECT_THAT(bond0->rdma_ports, ElementsAre(lag));
  EXPECT_THAT(inventory.rdma_ports, ElementsAre(lag));  // counters are read once per port
  EXPECT_TRUE(inventory.rdma_netlink_available);

  EXPECT_TRUE(SelectedByDefault(*eth01));
  EXPECT_TRUE(SelectedByDefault(*eth02));  // a Mellanox PF even without its own RDMA port
  EXPECT_TRUE(SelectedByDefault(*bond0));
  EXPECT_FALSE(SelectedByDefault(*lo));
}

TEST(AssembleInventory, TheBondKeepsItsPortWhenTheActiveSlaveChanges) {
  RdmaPort after_failover = Port(2, "mlx5_bond_0", 9, "eth02");
  Inventory inventory = AssembleInventory(LagHost(), {after_failover}, true);
  EXPECT_TRUE(Find(inventory, "eth01")->rdma_ports.empty());
  EXPECT_THAT(Find(inventory, "eth02")->rdma_ports, ElementsAre(after_failover));
  EXPECT_THAT(Find(inventory, "bond0")->rdma_ports, ElementsAre(after_failover));
}

TEST(AssembleInventory, ANonLagPortOnABondMemberStaysWithThatMember) {
  // Without RoCE LAG each PF keeps its own mlx5_N even when enslaved; `rdma link` shows the
  // member, and the bond must not get a second copy of the same port.
  RdmaPort own = Port(3, "mlx5_1", 9, "eth02");
  Inventory inventory = AssembleInventory(LagHost(), {own}, true);
  EXPECT_THAT(Find(inventory, "eth02")->rdma_ports, ElementsAre(own));
  EXPECT_TRUE(Find(inventory, "bond0")->rdma_ports.empty());
}

TEST(AssembleInventory, MapsOnePortPerPfLikeIbdev2netdev) {
  // 14_obsidian_notes (a): mlx5_0..mlx5_3 port 1 ==> eth01..eth04.
  std::vector<Device> devices;
  std::vector<RdmaPort> ports;
  for (int i = 0; i < 4; ++i) {
    const std::string netdev = "eth0" + std::to_string(i + 1);
    devices.push_back(
        Pci(Link({.ifindex = 8 + i, .name = netdev}), "0000:3b:00." + std::to_string(i), 0x15b3));
    ports.push_back(Port(static_cast<uint32_t>(i), "mlx5_" + std::to_string(i), 8 + i, netdev));
  }
  Inventory inventory = AssembleInventory(devices, ports, true);
  for (int i = 0; i < 4; ++i) {
    const Device& device = inventory.devices[static_cast<size_t>(i)];
    EXPECT_EQ(device.role, DeviceRole::kPf);
    ASSERT_EQ(device.rdma_ports.size(), 1u) << device.name;
    EXPECT_EQ(device.rdma_ports[0].device, "mlx5_" + std::to_string(i));
  }
}

TEST(AssembleInventory, APortWithoutANetdevHereIsListedButNotAttached) {
  RdmaPort elsewhere = Port(5, "mlx5_4", 0, "");
  RdmaPort stale = Port(6, "mlx5_5", 99, "gone0");  // netdev vanished since the link dump
  Inventory inventory = AssembleInventory(LagHost(), {elsewhere, stale}, true);
  EXPECT_EQ(inventory.rdma_ports.size(), 2u);
  for (const Device& device : inventory.devices) EXPECT_TRUE(device.rdma_ports.empty());
}

TEST(AssembleInventory, AnUnknownMasterLeavesTheNameEmpty) {
  std::vector<Device> devices = {Link({.ifindex = 3, .name = "eth0", .master = 77})};
  Inventory inventory = AssembleInventory(devices, {}, false);
  EXPECT_EQ(inventory.devices[0].master, "");
  EXPECT_EQ(inventory.devices[0].master_ifindex, 77);
  EXPECT_FALSE(inventory.rdma_netlink_available);
}

TEST(AssembleInventory, AVlanIsAnUpperOfItsLinkAndOfTheBondsMembers) {
  std::vector<Device> devices = LagHost();  // eth01, eth02 in bond0 (ifindex 10)
  devices.push_back(Link({.ifindex = 20, .name = "bond0.100", .kind = "vlan", .link = 10}));
  devices.push_back(Link({.ifindex = 21, .name = "eth01.7", .kind = "vlan", .link = 8}));
  // Not VLANs, though IFLA_LINK names a lower device: a macvlan and a veth's peer.
  devices.push_back(Link({.ifindex = 22, .name = "mv0", .kind = "macvlan", .link = 9}));
  devices.push_back(Link({.ifindex = 23, .name = "veth0", .kind = "veth", .link = 9}));
  // A VLAN whose lower device is in another netns: ifindex 9 there is not eth02 here.
  devices.push_back(
      Link({.ifindex = 24, .name = "vlan.far", .kind = "vlan", .link = 9, .link_netnsid = 0}));
  Inventory inventory = AssembleInventory(devices, {}, true);
  EXPECT_THAT(Find(inventory, "bond0")->vlan_uppers, ElementsAre("bond0.100"));
  EXPECT_THAT(Find(inventory, "eth01")->vlan_uppers, ElementsAre("eth01.7", "bond0.100"));
  EXPECT_THAT(Find(inventory, "eth02")->vlan_uppers, ElementsAre("bond0.100"));
  EXPECT_TRUE(Find(inventory, "bond0.100")->vlan_uppers.empty());
  EXPECT_EQ(Find(inventory, "vlan.far")->link_ifindex, 0);
  EXPECT_EQ(Find(inventory, "mv0")->link_ifindex, 9);
}

TEST(ClassifyRole, FollowsBondThenVfThenPci) {
  Device device;
  EXPECT_EQ(ClassifyRole(device), DeviceRole::kOther);
  device.pci_address = "0000:3b:00.0";
  EXPECT_EQ(ClassifyRole(device), DeviceRole::kPf);
  device.slave_kind = "bridge";  // a bridge port stays what it is
  EXPECT_EQ(ClassifyRole(device), DeviceRole::kPf);
  device.is_vf = true;
  EXPECT_EQ(ClassifyRole(device), DeviceRole::kVf);
  device.slave_kind = "bond";
  EXPECT_EQ(ClassifyRole(device), DeviceRole::kBondMember);
  Device bond;
  bond.kind = "bond";
  EXPECT_EQ(ClassifyRole(bond), DeviceRole::kBond);
}

TEST(SelectedByDefault, PicksMellanoxPfsAndRdmaBoundNetdevs) {
  EXPECT_TRUE(SelectedByDefault(Pci(Device{}, "0000:3b:00.0", 0x15b3)));
  EXPECT_FALSE(SelectedByDefault(Pci(Device{}, "0000:3b:00.2", 0x15b3, /*vf=*/true)));
  EXPECT_FALSE(SelectedByDefault(Pci(Device{}, "0000:00:1f.6", 0x8086)));
  Device rxe_bound;  // Soft-RoCE on a veth
  rxe_bound.rdma_ports.push_back(RdmaPort{.device = "rxe0", .port = 1});
  EXPECT_TRUE(SelectedByDefault(rxe_bound));
  EXPECT_FALSE(SelectedByDefault(Device{}));
}

// --- sysfs ---------------------------------------------------------------------------------

class SysfsTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/roceqos-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  /// A PCI function under devices/pci0000:00 with its vendor file and bus link.
  void PciFunction(const std::string& bdf, const std::string& vendor_file) {
    const fs::path dir = root_ / "devices/pci0000:00" / bdf;
    fs::create_directories(dir);
    std::ofstream(dir / "vendor") << vendor_file;
    fs::create_directories(root_ / "bus/pci");
    fs::create_directory_symlink("../../../bus/pci", dir / "subsystem");
  }
  void Netdev(const std::string& name, const std::string& device_target) {
    const fs::path dir = root_ / "class/net" / name;
    fs::create_directories(dir);
    if (!device_target.empty()) fs::create_directory_symlink(device_target, dir / "device");
  }
  Device Read(const std::string& name) {
    Device device;
    device.name = name;
    ReadSysfsInfo(root_.string(), device);
    return device;
  }

  fs::path root_;
};

TEST_F(SysfsTree, TellsPfVfForeignVendorAndVirtualApart) {
  PciFunction("0000:3b:00.0", "0x15b3\n");
  PciFunction("0000:3b:00.2", "0x15b3\n");
  fs::create_directory_symlink("../0000:3b:00.0", root_ / "devices/pci0000:00/0000:3b:00.2/physfn");
  PciFunction("0000:00:1f.6", "0x8086\n");
  PciFunction("0000:5e:00.0", "banana\n");
  fs::create_directories(root_ / "devices/platform/soc-eth");
  fs::create_directories(root_ / "bus/platform");
  fs::create_directory_symlink("../../../bus/platform",
                               root_ / "devices/platform/soc-eth/subsystem");
  Netdev("ens1f0np0", "../../../devices/pci0000:00/0000:3b:00.0");
  Netdev("ens1f0v0", "../../../devices/pci0000:00/0000:3b:00.2");
  Netdev("eno1", "../../../devices/pci0000:00/0000:00:1f.6");
  Netdev("odd0", "../../../devices/pci0000:00/0000:5e:00.0");
  Netdev("end0", "../../../devices/platform/soc-eth");
  Netdev("veth0", "");

  Device pf = Read("ens1f0np0");
  EXPECT_EQ(pf.pci_address, "0000:3b:00.0");
  EXPECT_EQ(pf.pci_vendor, 0x15b3u);
  EXPECT_FALSE(pf.is_vf);
  EXPECT_EQ(ClassifyRole(pf), DeviceRole::kPf);
  EXPECT_TRUE(SelectedByDefault(pf));

  Device vf = Read("ens1f0v0");
  EXPECT_EQ(vf.pci_address, "0000:3b:00.2");
  EXPECT_TRUE(vf.is_vf);
  EXPECT_EQ(ClassifyRole(vf), DeviceRole::kVf);
  EXPECT_FALSE(SelectedByDefault(vf));

  Device intel = Read("eno1");
  EXPECT_EQ(intel.pci_vendor, 0x8086u);
  EXPECT_EQ(ClassifyRole(intel), DeviceRole::kPf);
  EXPECT_FALSE(SelectedByDefault(intel));

  Device odd = Read("odd0");
  EXPECT_EQ(odd.pci_address, "0000:5e:00.0");
  EXPECT_EQ(odd.pci_vendor, 0u);  // unreadable vendor: not Mellanox

  Device platform = Read("end0");
  EXPECT_EQ(platform.pci_address, "");
  EXPECT_EQ(ClassifyRole(platform), DeviceRole::kOther);

  Device virt = Read("veth0");
  EXPECT_EQ(virt.pci_address, "");
  EXPECT_FALSE(virt.is_vf);

  Device missing = Read("nonexistent0");
  EXPECT_EQ(missing.pci_address, "");
}

// --- Discovery against the real kernel -----------------------------------------------------

/// Stands in for RDMA netlink, which this kernel lacks (reference: no NIC, no ib_core here).
class FakeRdma final : public RdmaCollector {
 public:
  explicit FakeRdma(std::function<std::vector<RdmaPort>()> ports) : ports_(std::move(ports)) {}
  Result<std::vector<RdmaPort>> ListPorts() override { return ports_(); }
  Result<CounterSet> ReadCounters(const RdmaPort&) override {
    return MakeError(EOPNOTSUPP, "fake");
  }

 private:
  std::function<std::vector<RdmaPort>()> ports_;
};

bool KernelHasRdmaNetlink() {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  if (fd < 0) return false;
  close(fd);
  return true;
}

TEST(Discovery, AKernelWithoutRdmaNetlinkIsNotAnError) {
  Discovery discovery("/nonexistent", [] {
    return Result<std::unique_ptr<RdmaCollector>>(
        MakeError(EPROTONOSUPPORT, "socket(AF_NETLINK, protocol 20): Protocol not supported"));
  });
  for (int call = 0; call < 2; ++call) {  // the sockets are reused between calls
    Result<Inventory> inventory = discovery.Discover();
    ASSERT_TRUE(inventory) << inventory.error().message;
    EXPECT_FALSE(inventory->rdma_netlink_available);
    EXPECT_TRUE(inventory->rdma_ports.empty());
    ASSERT_NE(Find(*inventory, "lo"), nullptr);
    EXPECT_EQ(Find(*inventory, "lo")->ifindex, 1);
    // No RDMA netlink, no RDMA ports: that is known, not a failed listing.
    EXPECT_TRUE(Find(*inventory, "lo")->rdma_ports_known);
  }
}

TEST(Discovery, OtherRdmaFailuresKeepTheNetdevsAndReportTheRdmaError) {
  int opens = 0;
  Discovery discovery("/nonexistent", [&] {
    ++opens;
    return Result<std::unique_ptr<RdmaCollector>>(MakeError(EACCES, "RDMA netlink: denied"));
  });
  Result<Inventory> inventory = discovery.Discover();
  ASSERT_TRUE(inventory) << inventory.error().message;
  ASSERT_TRUE(inventory->rdma_error.has_value());
  EXPECT_EQ(inventory->rdma_error->errnum, EACCES);
  EXPECT_TRUE(inventory->rdma_netlink_available);
  EXPECT_TRUE(inventory->rdma_ports.empty());
  EXPECT_NE(Find(*inventory, "lo"), nullptr);  // ethtool sampling must not depend on RDMA
  inventory = discovery.Discover();
  ASSERT_TRUE(inventory);
  EXPECT_TRUE(inventory->rdma_error.has_value());
  EXPECT_EQ(opens, 2);  // retried on the next call
}

// RDMA netlink whose dump answers what the test scripts, call by call.
class ScriptedRdma final : public RdmaCollector {
 public:
  explicit ScriptedRdma(std::function<Result<std::vector<RdmaPort>>()> list)
      : list_(std::move(list)) {}
  Result<std::vector<RdmaPort>> ListPorts() override { return list_(); }
  Result<CounterSet> ReadCounters(const RdmaPort&) override {
    return MakeError(EOPNOTSUPP, "fake");
  }

 private:
  std::function<Result<std::vector<RdmaPort>>()> list_;
};

RdmaPort Port(const std::string& device) {
  RdmaPort p;
  p.device = device;
  p.port = 1;
  p.netdev = "lo";
  return p;
}

TEST(Discovery, AnInterruptedRdmaDumpIsRetriedOnAFreshSocket) {
  std::vector<Result<std::vector<RdmaPort>>> script = {
      MakeError(EINTR, "RDMA_NLDEV_CMD_GET dump: interrupted (NLM_F_DUMP_INTR); retry"),
      MakeError(ETIMEDOUT, "RDMA_NLDEV_CMD_GET dump: no reply within 2000 ms"),
      std::vector<RdmaPort>{Port("mlx5_0")}};
  size_t calls = 0;
  int opens = 0;
  Discovery discovery("/nonexistent", [&] {
    ++opens;
    return Result<std::unique_ptr<RdmaCollector>>(std::make_unique<ScriptedRdma>(
        [&] { return script[std::min(calls++, script.size() - 1)]; }));
  });
  Result<Inventory> inventory = discovery.Discover();
  ASSERT_TRUE(inventory) << inventory.error().message;
  EXPECT_FALSE(inventory->rdma_error.has_value());
  ASSERT_EQ(inventory->rdma_ports.size(), 1u);
  EXPECT_EQ(calls, 3u);
  EXPECT_EQ(opens, 3);
}

TEST(Discovery, AFailedRdmaListingKeepsTheLastPortsForABoundedTime) {
  bool fail = false;
  auto now = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  Discovery discovery("/nonexistent", [&] {
    return Result<std::unique_ptr<RdmaCollector>>(
        std::make_unique<ScriptedRdma>([&]() -> Result<std::vector<RdmaPort>> {
          if (fail) return MakeError(EINTR, "interrupted (NLM_F_DUMP_INTR)");
          return std::vector<RdmaPort>{Port("mlx5_0")};
        }));
  });
  discovery.SetClock([&] { return now; });
  ASSERT_TRUE(discovery.Discover());
  fail = true;
  now += std::chrono::seconds(20);
  Result<Inventory> inventory = discovery.Discover();
  ASSERT_TRUE(inventory);
  EXPECT_TRUE(inventory->rdma_error.has_value()) << "the failure is still reported";
  ASSERT_EQ(inventory->rdma_ports.size(), 1u) << "but the devices keep their RDMA ports";
  EXPECT_EQ(inventory->rdma_ports_stale_seconds, 20.0);
  now += kRdmaPortsKeep;
  inventory = discovery.Discover();
  ASSERT_TRUE(inventory);
  EXPECT_TRUE(inventory->rdma_ports.empty()) << "not forever";
  EXPECT_FALSE(inventory->rdma_ports_stale_seconds.has_value());
}

// A listing that failed with no kept list to stand in (at start, or after kRdmaPortsKeep) leaves
// every device's RDMA ports unknown, so a policy rule on rdma_device is not decided against an
// empty list; a kept list, or the next good listing, makes them known again.
TEST(Discovery, RdmaPortsAreUnknownOnlyWhileNoListStandsIn) {
  bool fail = true;
  auto now = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  Discovery discovery("/nonexistent", [&] {
    return Result<std::unique_ptr<RdmaCollector>>(
        std::make_unique<ScriptedRdma>([&]() -> Result<std::vector<RdmaPort>> {
          if (fail) return MakeError(EIO, "RDMA_NLDEV_CMD_GET dump: Input/output error");
          return std::vector<RdmaPort>{Port("mlx5_0")};
        }));
  });
  discovery.SetClock([&] { return now; });
  auto known = [&](const Inventory& inventory) {
    const Device* lo = Find(inventory, "lo");
    return lo != nullptr && lo->rdma_ports_known;
  };
  Result<Inventory> first = discovery.Discover();  // the first listing fails: nothing kept
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(first->rdma_error.has_value());
  EXPECT_FALSE(known(*first));
  for (const Device& device : first->devices) EXPECT_FALSE(device.rdma_ports_known) << device.name;

  fail = false;
  Result<Inventory> good = discovery.Discover();
  ASSERT_TRUE(good);
  EXPECT_TRUE(known(*good));

  fail = true;
  now += std::chrono::seconds(20);
  Result<Inventory> kept = discovery.Discover();
  ASSERT_TRUE(kept);
  ASSERT_TRUE(kept->rdma_ports_stale_seconds.has_value());
  EXPECT_TRUE(known(*kept)) << "the kept list stands in";

  now += kRdmaPortsKeep;
  Result<Inventory> expired = discovery.Discover();
  ASSERT_TRUE(expired);
  EXPECT_FALSE(expired->rdma_ports_stale_seconds.has_value());
  EXPECT_FALSE(known(*expired)) << "the keep expired";
}

TEST(Discovery, TheDefaultOpenerReflectsThisKernel) {
  Discovery discovery("/nonexistent");
  Result<Inventory> inventory = discovery.Discover();
  ASSERT_TRUE(inventory) << inventory.error().message;
  EXPECT_EQ(inventory->rdma_netlink_available, KernelHasRdmaNetlink());
  ASSERT_NE(Find(*inventory, "lo"), nullptr);
}

class DiscoveryInNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    netns_ = testing::PrivateNetns::Create("disc", &why);
    if (!netns_) GTEST_SKIP() << why;
    for (const char* cmd : {"link set lo up", "link add vtA type veth peer name vtB",
                            "link add vtC type veth peer name vtD", "link add br0 type bridge",
                            "link set vtA master br0", "link set vtA mtu 9000", "link set vtA up",
                            "link set vtB up", "link set br0 up"}) {
      ASSERT_TRUE(netns_->Ip(cmd)) << "ip -n " << netns_->name() << " " << cmd;
    }
    // IFLA_OPERSTATE follows carrier through linkwatch, asynchronously (up to ~1 s): wait until
    // iproute2 itself reports both veth ends up, so the discovery below sees a settled state.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!(netns_->Ip("-o link show vtA | grep -q 'state UP'") &&
             netns_->Ip("-o link show vtB | grep -q 'state UP'"))) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "veth pair never came up";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll interval, not a wait
    }
    char tmpl[] = "/tmp/roceqos-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    empty_sysfs_ = tmpl;
  }
  void TearDown() override {
    if (!empty_sysfs_.empty()) fs::remove_all(empty_sysfs_);
  }

  /// Discovers inside the namespace, optionally with a stand-in RDMA netlink.
  Result<Inventory> DiscoverInside(std::optional<RdmaOpener> opener, bool* kernel_rdma) {
    Result<Inventory> result = MakeError(-1, "not run");
    std::string why;
    bool ran = netns_->Run(
        [&] {
          *kernel_rdma = KernelHasRdmaNetlink();
          Discovery discovery = opener ? Discovery(empty_sysfs_, *opener) : Discovery(empty_sysfs_);
          result = discovery.Discover();
        },
        &why);
    EXPECT_TRUE(ran) << why;
    return result;
  }

  std::unique_ptr<testing::PrivateNetns> netns_;
  std::string empty_sysfs_;
};

TEST_F(DiscoveryInNetns, FindsLoVethsAndTheBridgeWithTheirRelations) {
  bool kernel_rdma = false;
  Result<Inventory> inventory = DiscoverInside(std::nullopt, &kernel_rdma);
  ASSERT_TRUE(inventory) << inventory.error().message;
  EXPECT_EQ(inventory->rdma_netlink_available, kernel_rdma);
  ASSERT_EQ(inventory->devices.size(), 6u);  // lo, vtA, vtB, vtC, vtD, br0

  const Device* lo = Find(*inventory, "lo");
  ASSERT_NE(lo, nullptr);
  EXPECT_EQ(lo->ifindex, 1);
  EXPECT_TRUE(lo->admin_up);
  EXPECT_EQ(lo->mtu, 65536u);
  EXPECT_EQ(OperStateName(lo->oper_state), "unknown");
  EXPECT_EQ(lo->role, DeviceRole::kOther);

  const Device* vtA = Find(*inventory, "vtA");
  const Device* vtB = Find(*inventory, "vtB");
  const Device* vtC = Find(*inventory, "vtC");
  const Device* br0 = Find(*inventory, "br0");
  ASSERT_TRUE(vtA && vtB && vtC && br0);
  EXPECT_EQ(vtA->kind, "veth");
  EXPECT_EQ(vtA->driver, "veth");  // ETHTOOL_GDRVINFO
  EXPECT_EQ(vtA->mtu, 9000u);
  EXPECT_EQ(vtA->master_ifindex, br0->ifindex);
  EXPECT_EQ(vtA->master, "br0");
  EXPECT_EQ(vtA->slave_kind, "bridge");
  EXPECT_TRUE(vtA->admin_up);
  EXPECT_TRUE(vtA->carrier);
  EXPECT_EQ(OperStateName(vtA->oper_state), "up");
  EXPECT_EQ(vtA->role, DeviceRole::kOther);
  EXPECT_EQ(vtB->master, "");
  EXPECT_EQ(OperStateName(vtB->oper_state), "up");
  EXPECT_FALSE(vtC->admin_up);
  EXPECT_FALSE(vtC->carrier);
  EXPECT_EQ(OperStateName(vtC->oper_state), "down");
  EXPECT_EQ(br0->kind, "bridge");
  EXPECT_EQ(br0->driver, "bridge");
  for (const Device& device : inventory->devices) {
    EXPECT_EQ(device.pci_address, "") << device.name;
    EXPECT_FALSE(SelectedByDefault(device)) << device.name;
  }
}

TEST_F(DiscoveryInNetns, AttachesAnRdmaPortToTheNetdevItNames) {
  // As `rdma link add rxe0 type rxe netdev vtA` would: PORT_GET names vtA by ifindex.
  RdmaOpener opener = [] {
    return Result<std::unique_ptr<RdmaCollector>>(std::make_unique<FakeRdma>([] {
      RdmaPort port;
      port.device = "rxe0";
      port.port = 1;
      port.netdev = "vtA";
      port.netdev_index = static_cast<int32_t>(if_nametoindex("vtA"));  // this thread's netns
      return std::vector<RdmaPort>{port};
    }));
  };
  bool kernel_rdma = false;
  Result<Inventory> inventory = DiscoverInside(opener, &kernel_rdma);
  ASSERT_TRUE(inventory) << inventory.error().message;
  EXPECT_TRUE(inventory->rdma_netlink_available);
  const Device* vtA = Find(*inventory, "vtA");
  ASSERT_NE(vtA, nullptr);
  ASSERT_EQ(vtA->rdma_ports.size(), 1u);
  EXPECT_EQ(vtA->rdma_ports[0].device, "rxe0");
  EXPECT_TRUE(SelectedByDefault(*vtA));
  EXPECT_TRUE(Find(*inventory, "br0")->rdma_ports.empty());  // a bridge is not a RoCE LAG
  EXPECT_FALSE(SelectedByDefault(*Find(*inventory, "vtB")));
}

TEST_F(DiscoveryInNetns, AMacvlanOrAVethPeerIsNoVlanUpper) {
  // The kernel sends IFLA_LINK for both; only IFLA_INFO_KIND tells them from a VLAN.
  ASSERT_TRUE(netns_->Ip("link add link vtD name mv0 type macvlan"));
  bool kernel_rdma = false;
  Result<Inventory> inventory = DiscoverInside(std::nullopt, &kernel_rdma);
  ASSERT_TRUE(inventory) << inventory.error().message;
  const Device* vtD = Find(*inventory, "vtD");
  const Device* mv0 = Find(*inventory, "mv0");
  ASSERT_TRUE(vtD && mv0);
  EXPECT_EQ(mv0->link_ifindex, vtD->ifindex);
  EXPECT_EQ(Find(*inventory, "vtA")->link_ifindex, Find(*inventory, "vtB")->ifindex);
  for (const Device& device : inventory->devices)
    EXPECT_TRUE(device.vlan_uppers.empty()) << device.name;
}

TEST_F(DiscoveryInNetns, AVlanLinkIsAnUpperOfItsRealDevice) {
  // Needs the 8021q module (VLAN links); a kernel without it has no VLAN to count.
  if (!netns_->Ip("link add link vtB name vtB.100 type vlan id 100"))
    GTEST_SKIP() << "this kernel cannot create a VLAN link (no 8021q)";
  ASSERT_TRUE(netns_->Ip("link add link vtB.100 name vtB.100.7 type vlan id 7"));
  bool kernel_rdma = false;
  Result<Inventory> inventory = DiscoverInside(std::nullopt, &kernel_rdma);
  ASSERT_TRUE(inventory) << inventory.error().message;
  EXPECT_THAT(Find(*inventory, "vtB")->vlan_uppers, ElementsAre("vtB.100"));
  EXPECT_THAT(Find(*inventory, "vtB.100")->vlan_uppers, ElementsAre("vtB.100.7"));
  EXPECT_TRUE(Find(*inventory, "vtA")->vlan_uppers.empty());
  EXPECT_EQ(Find(*inventory, "vtB.100")->kind, "vlan");
}

}  // namespace
}  // namespace roceqos
