#include "collectors/discovery.h"

// glibc's net/if.h must precede linux/if.h (libc-compat): collectors/ compiles in unity batches
// (cmake/unity.cmake), where a later file of the batch includes net/if.h.
#include <net/if.h>
// clang-format off
#include <linux/if.h>
// clang-format on

#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <unordered_map>
#include <utility>

#include "base/enum_names.h"
#include "base/log_event.h"
#include "collectors/ethtool_ioctl.h"
#include "collectors/netlink/socket.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

using netlink::Attrs;
using netlink::MakePolicy;
namespace attr = netlink::attr;
namespace fs = std::filesystem;

constexpr uint32_t kMellanoxVendor = 0x15b3;
constexpr int kLinkDumpAttempts = 3;  // NLM_F_DUMP_INTR: links changed during the dump

// rtnl_fill_ifinfo (net/core/rtnetlink.c).
constexpr auto kLinkPolicy = MakePolicy<IFLA_LINK_NETNSID + 1>({
    {IFLA_IFNAME, attr::Required(attr::NonEmptyString("IFLA_IFNAME", IFNAMSIZ))},
    {IFLA_MTU, attr::U32("IFLA_MTU")},
    {IFLA_LINK, attr::U32("IFLA_LINK")},
    {IFLA_LINK_NETNSID, attr::U32("IFLA_LINK_NETNSID")},
    {IFLA_MASTER, attr::U32("IFLA_MASTER")},
    {IFLA_OPERSTATE, attr::U8("IFLA_OPERSTATE")},
    {IFLA_LINKINFO, attr::Nested("IFLA_LINKINFO")},
    {IFLA_CARRIER_CHANGES, attr::U32("IFLA_CARRIER_CHANGES")},
});

// rtnl_link_info_fill / rtnl_link_slave_info_fill.
constexpr auto kLinkInfoPolicy = MakePolicy<IFLA_INFO_SLAVE_KIND + 1>({
    {IFLA_INFO_KIND, attr::String("IFLA_INFO_KIND")},
    {IFLA_INFO_SLAVE_KIND, attr::String("IFLA_INFO_SLAVE_KIND")},
});

// OperState carries the kernel's IF_OPER_* values (linux/if.h), so the attribute converts as is.
static_assert(static_cast<uint8_t>(OperState::kUnknown) == IF_OPER_UNKNOWN &&
              static_cast<uint8_t>(OperState::kNotPresent) == IF_OPER_NOTPRESENT &&
              static_cast<uint8_t>(OperState::kDown) == IF_OPER_DOWN &&
              static_cast<uint8_t>(OperState::kLowerLayerDown) == IF_OPER_LOWERLAYERDOWN &&
              static_cast<uint8_t>(OperState::kTesting) == IF_OPER_TESTING &&
              static_cast<uint8_t>(OperState::kDormant) == IF_OPER_DORMANT &&
              static_cast<uint8_t>(OperState::kUp) == IF_OPER_UP);

// The two ETHTOOL_GDRVINFO fields discovery needs (the ethtool collector has its own DriverInfo).
struct DriverBinding {
  std::string driver;
  std::string bus_info;
};

std::string FixedString(const char* field, size_t size) {
  return std::string(field, strnlen(field, size));
}

/// ETHTOOL_GDRVINFO, the one ethtool command discovery needs: it goes through the shared
/// SIOCETHTOOL helper, not the ethtool collector's EthtoolIo, so discovery does not depend on that
/// collector.
Result<DriverBinding> QueryDriverInfo(int ioctl_fd, const std::string& name) {
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  if (auto done = EthtoolIoctl(ioctl_fd, name, &info, "ETHTOOL_GDRVINFO"); !done) {
    return done.error();
  }
  return DriverBinding{FixedString(info.driver, sizeof(info.driver)),
                       FixedString(info.bus_info, sizeof(info.bus_info))};
}

std::optional<std::string> ReadFirstLine(const fs::path& path) {
  FileRead file = ReadSmallFile(path.string());
  if (file.missing || !file.error.empty() || file.content.empty()) return std::nullopt;
  return file.content.substr(0, file.content.find('\n'));
}

/// "0x15b3" (sysfs PCI vendor/device files); nullopt for anything else.
std::optional<uint32_t> ParseHexId(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return std::nullopt;
  text.remove_prefix(2);
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

void LogRdmaNetlinkUnavailableOnce(const Error& error) {
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    LogEvent(spdlog::level::info,
             "RDMA netlink is not available in this kernel; RDMA ports and RoCE counters are "
             "not collected",
             {{"error", error.message}});
  }
}

}  // namespace

DeviceRole ClassifyRole(const Device& device) {
  if (device.kind == "bond") return DeviceRole::kBond;
  if (device.slave_kind == "bond") return DeviceRole::kBondMember;
  if (device.is_vf) return DeviceRole::kVf;
  if (!device.pci_address.empty()) return DeviceRole::kPf;
  return DeviceRole::kOther;
}

bool SelectedByDefault(const Device& device) {
  const bool mellanox_pf =
      device.pci_vendor == kMellanoxVendor && !device.is_vf && !device.pci_address.empty();
  return mellanox_pf || !device.rdma_ports.empty();
}

Result<Device> ParseLinkReply(netlink::Bytes body) {
  constexpr std::string_view kContext = "RTM_NEWLINK";
  ifinfomsg header;
  if (body.size() < sizeof(header)) {
    return MakeError(
        0, fmt::format("{}: {} byte(s) is shorter than struct ifinfomsg", kContext, body.size()));
  }
  std::memcpy(&header, body.data(), sizeof(header));
  Result<Attrs> attrs =
      Attrs::Parse(body.subspan(NLMSG_ALIGN(sizeof(header))), kLinkPolicy, kContext);
  if (!attrs) return attrs.error();

  Device device;
  device.ifindex = header.ifi_index;
  device.name = std::string(*attrs->String(IFLA_IFNAME));
  device.admin_up = (header.ifi_flags & IFF_UP) != 0;
  device.carrier = (header.ifi_flags & IFF_LOWER_UP) != 0;
  device.mtu = attrs->U32(IFLA_MTU).value_or(0);
  device.carrier_changes = attrs->U32(IFLA_CARRIER_CHANGES);  // u32, link flaps since creation
  device.master_ifindex = static_cast<int32_t>(attrs->U32(IFLA_MASTER).value_or(0));
  // IFLA_LINK names the lower device (a VLAN's real device) by its ifindex in the netns that
  // IFLA_LINK_NETNSID names when present: an ifindex of another netns is no device of this dump.
  if (!attrs->Has(IFLA_LINK_NETNSID))
    device.link_ifindex = static_cast<int32_t>(attrs->U32(IFLA_LINK).value_or(0));
  device.oper_state = static_cast<OperState>(
      attrs->U8(IFLA_OPERSTATE).value_or(IF_OPER_UNKNOWN));  // IFLA_OPERSTATE
  if (attrs->Has(IFLA_LINKINFO)) {
    Result<Attrs> info = attrs->Nested(IFLA_LINKINFO, kLinkInfoPolicy,
                                       fmt::format("{} {} IFLA_LINKINFO", kContext, device.name));
    if (!info) return info.error();
    device.kind = std::string(info->String(IFLA_INFO_KIND).value_or(""));
    device.slave_kind = std::string(info->String(IFLA_INFO_SLAVE_KIND).value_or(""));
  }
  return device;
}

void ReadSysfsInfo(std::string_view sysfs_root, Device& device) {
  const fs::path link = fs::path(sysfs_root) / "class/net" / device.name / "device";
  const std::optional<std::string> target = ReadLink(link.string());
  if (!target) return;  // virtual netdev (veth, bond, lo): no backing device
  device.is_vf = PathExists((link / "physfn").string());  // SR-IOV VF
  // A PCI function's device link resolves into the PCI bus: its subsystem link names "pci".
  const std::optional<std::string> subsystem = ReadLink((link / "subsystem").string());
  if (!subsystem || fs::path(*subsystem).filename() != "pci") return;
  device.pci_address = fs::path(*target).filename().string();
  if (auto vendor = ReadFirstLine(link / "vendor")) {
    if (auto id = ParseHexId(*vendor)) {
      device.pci_vendor = *id;
    } else {
      LogEvent(spdlog::level::debug, "unreadable PCI vendor",
               {{"netdev", device.name}, {"vendor", *vendor}});
    }
  }
}

// A VLAN netdev (IFLA_INFO_KIND "vlan", 802.1Q or 802.1ad) sends its frames tagged through its
// lower device (IFLA_LINK); a VLAN on a bond sends them through the bond's members. Masters are
// resolved first: a member's bond must be known here.
namespace {
template <typename Find>
void AttachVlanUppers(std::vector<Device>& devices, Find find) {
  for (Device& device : devices) device.vlan_uppers.clear();
  for (const Device& upper : devices) {
    if (upper.kind != "vlan" || upper.link_ifindex == 0) continue;
    if (Device* lower = find(upper.link_ifindex)) lower->vlan_uppers.push_back(upper.name);
  }
  for (Device& device : devices) {
    if (device.slave_kind != "bond" || device.master_ifindex == 0) continue;
    if (const Device* bond = find(device.master_ifindex))
      device.vlan_uppers.insert(device.vlan_uppers.end(), bond->vlan_uppers.begin(),
                                bond->vlan_uppers.end());
  }
}
}  // namespace

Inventory AssembleInventory(std::vector<Device> devices, std::vector<RdmaPort> ports,
                            bool rdma_netlink_available) {
  std::unordered_map<int32_t, size_t> by_ifindex;
  for (size_t i = 0; i < devices.size(); ++i) by_ifindex[devices[i].ifindex] = i;
  auto find = [&](int32_t ifindex) -> Device* {
    auto it = by_ifindex.find(ifindex);
    return it == by_ifindex.end() ? nullptr : &devices[it->second];
  };

  for (Device& device : devices) {
    device.master.clear();
    if (device.master_ifindex == 0) continue;
    if (const Device* master = find(device.master_ifindex)) device.master = master->name;
  }
  AttachVlanUppers(devices, find);
  for (const RdmaPort& port : ports) {
    Device* netdev = port.netdev_index != 0 ? find(port.netdev_index) : nullptr;
    if (netdev == nullptr) continue;  // netdev in another netns, or none bound
    netdev->rdma_ports.push_back(port);
    // mlx5 RoCE LAG: PORT_GET names the active slave PF; the bond is what ibdev2netdev shows
    // and what stays put when the active slave changes. mlx5_ib registers a LAG device as
    // "mlx5_bond_%d" (mlx5_ib_stage_ib_reg_init); an ordinary mlx5_N port on a bond member is
    // not LAG and belongs to that member only.
    if (!port.device.starts_with("mlx5_bond_")) continue;
    if (netdev->slave_kind != "bond" || netdev->master_ifindex == 0) continue;
    Device* bond = find(netdev->master_ifindex);
    if (bond == nullptr) continue;
    bool attached = false;
    for (const RdmaPort& existing : bond->rdma_ports) {
      attached |= existing.device_index == port.device_index && existing.port == port.port;
    }
    if (!attached) bond->rdma_ports.push_back(port);
  }
  for (Device& device : devices) device.role = ClassifyRole(device);

  Inventory inventory;
  inventory.devices = std::move(devices);
  inventory.rdma_ports = std::move(ports);
  inventory.rdma_netlink_available = rdma_netlink_available;
  return inventory;
}

// A dump the kernel interrupted (NLM_F_DUMP_INTR: devices changed under it, reported as EINTR)
// or a reply that did not come in time: worth an immediate retry on a fresh socket.
static bool TransientRdmaError(const Error& e) {
  return e.errnum == EINTR || e.errnum == ETIMEDOUT || e.errnum == EBUSY || e.errnum == ENOBUFS;
}

struct Discovery::Impl {
  RdmaOpener open_rdma;
  std::function<std::chrono::steady_clock::time_point()> clock = &std::chrono::steady_clock::now;
  std::optional<std::vector<RdmaPort>> last_ports;  // last good list and when it was read
  std::chrono::steady_clock::time_point last_ports_at{};
  std::optional<netlink::Socket> route;
  std::unique_ptr<RdmaCollector> rdma;
  int ioctl_fd = -1;

  ~Impl() {
    if (ioctl_fd >= 0) close(ioctl_fd);
  }

  Result<std::vector<Device>> DumpLinks() {
    Result<void> status;
    std::vector<Device> devices;
    for (int attempt = 0; attempt < kLinkDumpAttempts; ++attempt) {
      devices.clear();
      netlink::Message request(RTM_GETLINK, NLM_F_DUMP);
      ifinfomsg header{};
      header.ifi_family = AF_UNSPEC;
      request.PutHeader(&header, sizeof(header));
      // Per-link statistics are not needed and are the bulk of each RTM_NEWLINK.
      request.PutU32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
      status = route->Request(
          request,
          [&](const netlink::NlMessage& reply) -> Result<void> {
            if (reply.header.nlmsg_type != RTM_NEWLINK) return {};
            Result<Device> device = ParseLinkReply(reply.body);
            if (!device) return device.error();
            devices.push_back(std::move(*device));
            return {};
          },
          "RTM_GETLINK dump");
      if (status || status.error().errnum != EINTR) break;
    }
    if (!status) return status.error();
    return devices;
  }

  /// Returns the ports, or an empty list with *available = false when the kernel lacks RDMA
  /// netlink.
  Result<std::vector<RdmaPort>> ListRdmaPorts(bool* available) {
    *available = true;
    if (!rdma) {
      Result<std::unique_ptr<RdmaCollector>> opened = open_rdma();
      if (!opened) {
        if (opened.error().errnum == EPROTONOSUPPORT) {
          LogRdmaNetlinkUnavailableOnce(opened.error());
          *available = false;
          return std::vector<RdmaPort>{};
        }
        return opened.error();
      }
      rdma = std::move(*opened);
    }
    Result<std::vector<RdmaPort>> ports = rdma->ListPorts();
    for (int attempt = 1;
         !ports && TransientRdmaError(ports.error()) && attempt < kLinkDumpAttempts; ++attempt) {
      // A fresh socket: the interrupted exchange may have left replies queued on the old one.
      Result<std::unique_ptr<RdmaCollector>> reopened = open_rdma();
      if (!reopened) return reopened.error();
      rdma = std::move(*reopened);
      ports = rdma->ListPorts();
    }
    if (!ports) rdma.reset();  // reopen next time: the socket may be out of step
    return ports;
  }

  /// A failed listing publishes the last good ports for a bounded time instead of none: devices
  /// without RDMA ports would lose their RDMA counters and look unbound (blocked_bond checks
  /// mlx5_bond_* names) for as long as the fault lasts.
  void KeepLastPorts(Inventory& inventory) {
    if (!last_ports) return;
    const auto age = clock() - last_ports_at;
    if (age > kRdmaPortsKeep) {
      last_ports.reset();
      return;
    }
    inventory.rdma_ports_stale_seconds = std::chrono::duration<double>(age).count();
  }
};

Discovery::Discovery(std::string sysfs_root)
    : Discovery(std::move(sysfs_root), [] { return RdmaCollector::Open(); }) {}

Discovery::Discovery(std::string sysfs_root, RdmaOpener open_rdma)
    : sysfs_root_(std::move(sysfs_root)), impl_(std::make_unique<Impl>()) {
  impl_->open_rdma = std::move(open_rdma);
}

Discovery::~Discovery() = default;

Result<Inventory> Discovery::Discover() {
  if (!impl_->route) {
    Result<netlink::Socket> route = netlink::Socket::Open(NETLINK_ROUTE);
    if (!route) return route.error();
    impl_->route.emplace(std::move(*route));
  }
  if (impl_->ioctl_fd < 0) {
    impl_->ioctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (impl_->ioctl_fd < 0) {
      const int errnum = errno;
      return MakeError(
          errnum, fmt::format("socket(AF_INET) for ETHTOOL_GDRVINFO: {}", std::strerror(errnum)));
    }
  }

  Result<std::vector<Device>> devices = impl_->DumpLinks();
  if (!devices) {
    impl_->route.reset();  // a failed exchange may leave replies queued: start clean next time
    return devices.error();
  }
  for (Device& device : *devices) {
    if (Result<DriverBinding> info = QueryDriverInfo(impl_->ioctl_fd, device.name)) {
      device.driver = std::move(info->driver);
      device.bus_info = std::move(info->bus_info);
    } else if (!info.error().NotSupported() && info.error().errnum != ENODEV) {
      // lo and some virtual devices have no driver info; a netdev that vanished since the dump
      // is dropped by the next discovery. Anything else is worth a debug line, not a failure.
      LogEvent(spdlog::level::debug, "ethtool driver info unreadable",
               {{"netdev", device.name}, {"error", info.error().message}});
    }
    ReadSysfsInfo(sysfs_root_, device);
  }

  bool rdma_available = true;
  Result<std::vector<RdmaPort>> ports = impl_->ListRdmaPorts(&rdma_available);
  if (!ports) {
    Inventory probe;
    impl_->KeepLastPorts(probe);
    std::vector<RdmaPort> kept;
    if (probe.rdma_ports_stale_seconds) kept = *impl_->last_ports;
    Inventory inventory = AssembleInventory(std::move(*devices), std::move(kept), rdma_available);
    if (!probe.rdma_ports_stale_seconds) {
      for (Device& device : inventory.devices) device.rdma_ports_known = false;
    }
    inventory.rdma_error = ports.error();
    inventory.rdma_ports_stale_seconds = probe.rdma_ports_stale_seconds;
    return inventory;
  }
  impl_->last_ports = *ports;
  impl_->last_ports_at = impl_->clock();
  return AssembleInventory(std::move(*devices), std::move(*ports), rdma_available);
}

void Discovery::SetClock(std::function<std::chrono::steady_clock::time_point()> clock) {
  impl_->clock = std::move(clock);
}

}  // namespace roceqos
