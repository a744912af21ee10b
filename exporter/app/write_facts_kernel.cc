#include "exporter/app/write_facts_kernel.h"

#include <spdlog/spdlog.h>

#include <string_view>
#include <utility>

#include "base/log_event.h"
#include "collectors/pci_function.h"

namespace roceqos {
namespace {

constexpr std::string_view kPciPrefix = "pci:";
constexpr std::string_view kNetdevPrefix = "netdev:";

}  // namespace

std::optional<ResolvedDevice> KernelDeviceResolver::Resolve(const std::string& identity) {
  const std::string_view id(identity);
  if (id.starts_with(kPciPrefix)) return ResolvePci(std::string(id.substr(kPciPrefix.size())));
  if (id.starts_with(kNetdevPrefix))
    return ResolveNetdev(std::string(id.substr(kNetdevPrefix.size())));
  return std::nullopt;
}

std::optional<ResolvedDevice> KernelDeviceResolver::ResolvePci(const std::string& address) const {
  Observed<PciFunction> function = ReadPciFunction(sysfs_root_, address);
  if (function.failed()) {
    LogEvent(spdlog::level::debug, "device identity: PCI function unreadable",
             {{"pci_address", address}, {"error", function.error}});
  }
  // One netdev per function is what an identity names; a function showing none (driver
  // unbound, mid-reload) or several (switchdev representors) names no single device to write.
  if (!function.ok() || function.value.netdevs.size() != 1) return std::nullopt;
  ResolvedDevice resolved;
  resolved.netdev = function.value.netdevs.front().name;
  resolved.ifindex = function.value.netdevs.front().ifindex;
  resolved.rdma_devices = std::move(function.value.rdma_devices);
  return resolved;
}

std::optional<ResolvedDevice> KernelDeviceResolver::ResolveNetdev(const std::string& name) const {
  Observed<int> ifindex = ReadNetdevIfindex(sysfs_root_, name);
  if (!ifindex.ok()) return std::nullopt;
  if (NetdevPciAddress(sysfs_root_, name)) return std::nullopt;
  return ResolvedDevice{.netdev = name, .ifindex = ifindex.value, .rdma_devices = {}};
}

}  // namespace roceqos
