#include "exporter/sampling/gid_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "collectors/pci_function.h"

namespace roceqos {
namespace {

// The netdev an address is on, if it is one of the carriers.
const AddressCarrier* CarrierOf(const std::vector<AddressCarrier>& carriers, int32_t ifindex) {
  for (const AddressCarrier& c : carriers)
    if (c.ifindex == ifindex) return &c;
  return nullptr;
}

// nullopt: a RoCE v2 GID of the address on its own netdev.
std::optional<GidMiss> Classify(const std::string& netdev, const IfAddress& address,
                                const std::vector<RoceGid>& gids) {
  const std::string gid_text = GidTextOf(address);
  const RoceGid* v2_elsewhere = nullptr;
  bool v1 = false;
  for (const RoceGid& g : gids) {
    if (g.gid != gid_text) continue;
    if (g.type == GidType::kRoceV2 && g.netdev == netdev) return std::nullopt;
    if (g.type == GidType::kRoceV2 && v2_elsewhere == nullptr) v2_elsewhere = &g;
    if (g.type == GidType::kIbRoceV1) v1 = true;
  }
  GidMiss miss{netdev, AddressText(address), address.family, GidMissReason::kNoGid, ""};
  if (v2_elsewhere != nullptr) {
    miss.reason = GidMissReason::kWrongNetdev;
    miss.gid_netdev = v2_elsewhere->netdev;
  } else if (v1) {
    miss.reason = GidMissReason::kV1Only;
  }
  return miss;
}

PortGidCounts CountGids(const std::string& netdev, const RdmaPort& port,
                        const std::vector<RoceGid>& gids) {
  PortGidCounts counts{netdev, port.device, port.port, 0, 0};
  for (const RoceGid& g : gids) (g.type == GidType::kRoceV2 ? counts.roce_v2 : counts.roce_v1)++;
  return counts;
}

// The netdev and its VLAN uppers, each with its ifindex; a VLAN that vanished is left out.
std::vector<AddressCarrier> CarriersOf(const Device& device, const GidReaders& readers) {
  std::vector<AddressCarrier> carriers{{device.name, device.ifindex}};
  for (const std::string& vlan : device.vlan_uppers)
    if (std::optional<int32_t> ifindex = readers.ifindex(vlan))
      carriers.push_back({vlan, *ifindex});
  return carriers;
}

// The GIDs of the ports bound to the device itself; nullopt when none is, or a table is absent.
std::optional<std::vector<RoceGid>> ReadOwnTables(const Device& device, const GidReaders& readers,
                                                  GidRound& round) {
  std::vector<RoceGid> all;
  bool any = false;
  for (const RdmaPort& port : device.rdma_ports) {
    if (!ChecksGidsOf(device, port)) continue;
    Observed<std::vector<RoceGid>> table = readers.table(port);
    if (table.absent()) return std::nullopt;
    if (!table.ok()) {
      round.errors.push_back(MakeError(
          table.errnum, fmt::format("{} port {}: {}", port.device, port.port, table.error)));
      return std::nullopt;
    }
    any = true;
    round.state.ports.push_back(CountGids(device.name, port, table.value));
    all.insert(all.end(), table.value.begin(), table.value.end());
  }
  if (!any) return std::nullopt;
  return all;
}

}  // namespace

bool ChecksGidsOf(const Device& device, const RdmaPort& port) {
  if (device.kind == "bond") return true;
  if (device.slave_kind == "bond") return false;
  return port.netdev == device.name;
}

NetdevGidCheck CheckAddressGids(const std::vector<AddressCarrier>& carriers,
                                const std::vector<IfAddress>& addresses,
                                const std::vector<RoceGid>& gids) {
  NetdevGidCheck check;
  for (const IfAddress& address : addresses) {
    const AddressCarrier* carrier = CarrierOf(carriers, address.ifindex);
    if (carrier == nullptr || !AddressSettled(address)) continue;
    check.checked[static_cast<size_t>(address.family)]++;
    if (std::optional<GidMiss> miss = Classify(carrier->netdev, address, gids))
      check.missing.push_back(std::move(*miss));
  }
  return check;
}

GidReaders KernelGidReaders(const std::string& sysfs_root) {
  return GidReaders{
      [sysfs_root](const RdmaPort& port) {
        return ReadRoceGids(sysfs_root, port.device, port.port);
      },
      [sysfs_root](const std::string& netdev) -> std::optional<int32_t> {
        const Observed<int> ifindex = ReadNetdevIfindex(sysfs_root, netdev);
        if (!ifindex.ok()) return std::nullopt;  // gone since discovery: nothing to check on it
        return ifindex.value;
      },
  };
}

GidRound CheckDeviceGids(const std::vector<const Device*>& devices,
                         const std::vector<IfAddress>& addresses, const GidReaders& readers) {
  GidRound round;
  for (const Device* device : devices) {
    const size_t ports_before = round.state.ports.size();
    std::optional<std::vector<RoceGid>> gids = ReadOwnTables(*device, readers, round);
    if (!gids) {
      round.state.ports.resize(ports_before);  // no half-read netdev: all its ports or none
      continue;
    }
    round.state.netdevs[device->name] =
        CheckAddressGids(CarriersOf(*device, readers), addresses, *gids);
  }
  return round;
}

}  // namespace roceqos
