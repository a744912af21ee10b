#include "exporter/app/check_gids.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace roceqos {
namespace {

constexpr std::string_view kWhy =
    "RDMA CM resolves a RoCE v2 connection to the GID of the address on its netdev: without one, "
    "connections from or to the address fail while every counter looks fine";

// Whether the device has an RDMA port of its own (the check's scope, gid_check.h).
bool HasOwnPort(const Device& device) {
  return std::any_of(device.rdma_ports.begin(), device.rdma_ports.end(),
                     [&](const RdmaPort& p) { return ChecksGidsOf(device, p); });
}

std::string ActualOf(const GidMiss& miss) {
  switch (miss.reason) {
    case GidMissReason::kV1Only:
      return "a RoCE v1 GID only (v1_only)";
    case GidMissReason::kWrongNetdev:
      return fmt::format("a RoCE v2 GID on {} (wrong_netdev)", miss.gid_netdev);
    case GidMissReason::kNoGid:
      break;
  }
  return "no GID (no_gid)";
}

std::vector<CheckItem> ItemsOf(const NetdevGidCheck& check) {
  std::vector<CheckItem> items;
  for (const GidMiss& m : check.missing)
    items.push_back({fmt::format("gids {}", m.address), FieldStatus::kDrift,
                     fmt::format("a RoCE v2 GID on {}", m.netdev), ActualOf(m), std::string(kWhy)});
  if (items.empty()) {
    const uint32_t n = check.checked[0] + check.checked[1];
    items.push_back({"gids", FieldStatus::kInSync, "a RoCE v2 GID for every address",
                     fmt::format("{} address{}, each with its RoCE v2 GID", n, n == 1 ? "" : "es"),
                     ""});
  }
  return items;
}

}  // namespace

std::map<std::string, std::vector<CheckItem>> GidCheckItems(const std::vector<Device>& devices,
                                                            const GidRound& round,
                                                            const std::string& dump_error) {
  std::map<std::string, std::vector<CheckItem>> items;
  for (const Device& device : devices) {
    if (!HasOwnPort(device)) continue;
    auto found = round.state.netdevs.find(device.name);
    if (found != round.state.netdevs.end()) {
      items[device.name] = ItemsOf(found->second);
      continue;
    }
    // Not checked: the dump failed, a table failed (an error names the port), or is absent.
    std::string why = dump_error;
    for (const RdmaPort& port : device.rdma_ports)
      for (const Error& error : round.errors)
        if (why.empty() &&
            error.message.rfind(fmt::format("{} port {}:", port.device, port.port), 0) == 0)
          why = error.message;
    if (why.empty())
      items[device.name] = {{"gids", FieldStatus::kAbsent, "a RoCE v2 GID for every address",
                             "no GID table in sysfs", ""}};
    else
      items[device.name] = {
          {"gids", FieldStatus::kFailed, "a RoCE v2 GID for every address", why, ""}};
  }
  return items;
}

GidLookup KernelGidItems(std::string sysfs_root) {
  return [sysfs_root = std::move(sysfs_root)](const std::vector<Device>& devices) {
    std::vector<const Device*> pointers;
    pointers.reserve(devices.size());
    for (const Device& d : devices) pointers.push_back(&d);
    Result<std::vector<IfAddress>> addresses = []() -> Result<std::vector<IfAddress>> {
      Result<std::unique_ptr<AddressCollector>> collector = AddressCollector::Open();
      if (!collector) return collector.error();
      return (*collector)->Dump();
    }();
    if (!addresses) return GidCheckItems(devices, {}, addresses.error().message);
    return GidCheckItems(devices,
                         CheckDeviceGids(pointers, *addresses, KernelGidReaders(sysfs_root)), "");
  };
}

}  // namespace roceqos
