#include "collectors/pci_function.h"

#include <fmt/format.h>

#include <cctype>
#include <climits>
#include <filesystem>

#include "collectors/host.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// IFNAMSIZ (linux/if.h) is 16 with the terminating NUL.
constexpr size_t kMaxNetdevName = 15;

bool IsLowerHex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  return true;
}

}  // namespace

bool IsPciAddress(std::string_view address) {
  // pci_name(): "%04x:%02x:%02x.%d" (domain:bus:slot.function); VMD domains have 5 digits.
  const size_t colon1 = address.find(':');
  if (colon1 == std::string_view::npos || colon1 < 4 || colon1 > 8) return false;
  const std::string_view rest = address.substr(colon1 + 1);
  if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return false;
  return IsLowerHex(address.substr(0, colon1)) && IsLowerHex(rest.substr(0, 2)) &&
         IsLowerHex(rest.substr(3, 2)) && rest[6] >= '0' && rest[6] <= '7';
}

bool IsNetdevName(std::string_view name) {
  // dev_valid_name() (net/core/dev.c).
  if (name.empty() || name.size() > kMaxNetdevName || name == "." || name == "..") return false;
  for (char c : name)
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

Result<int> ParseIfindex(std::string_view content) {
  // ifindex_show prints dev->ifindex with "%d"; a live netdev's is positive.
  return ParseSmallInt(content, 1, INT_MAX);
}

Observed<int> ReadNetdevIfindex(const std::string& sysfs_root, std::string_view netdev) {
  if (!IsNetdevName(netdev))
    return Observed<int>::Failed(fmt::format("\"{}\" is not a netdev name", netdev));
  const std::string path = fmt::format("{}/class/net/{}/ifindex", sysfs_root, netdev);
  FileRead file = ReadSmallFile(path);
  if (file.missing) return Observed<int>::Absent();
  if (!file.error.empty()) return Observed<int>::Failed(file.error, file.errnum);
  Result<int> ifindex = ParseIfindex(file.content);
  if (!ifindex) return Observed<int>::Failed(fmt::format("{}: {}", path, ifindex.error().message));
  return Observed<int>::Ok(*ifindex);
}

std::optional<std::string> NetdevPciAddress(const std::string& sysfs_root,
                                            std::string_view netdev) {
  if (!IsNetdevName(netdev)) return std::nullopt;
  const fs::path link = fs::path(sysfs_root) / "class/net" / std::string(netdev) / "device";
  const std::optional<std::string> target = ReadLink(link.string());
  if (!target) return std::nullopt;  // virtual netdev: no backing device
  const std::optional<std::string> subsystem = ReadLink((link / "subsystem").string());
  if (!subsystem || fs::path(*subsystem).filename() != "pci") return std::nullopt;
  return fs::path(*target).filename().string();
}

Observed<PciFunction> ReadPciFunction(const std::string& sysfs_root, std::string_view address) {
  if (!IsPciAddress(address))
    return Observed<PciFunction>::Failed(fmt::format("\"{}\" is not a PCI address", address));
  const std::string dir = fmt::format("{}/bus/pci/devices/{}", sysfs_root, address);
  if (!IsDirectory(dir)) return Observed<PciFunction>::Absent();
  PciFunction function;
  function.address = std::string(address);
  // net/ and infiniband/ exist only while a driver has registered a netdev or an ib_device on
  // the function: missing is "none now", not a fault.
  DirList net = ListSubdirectories(dir + "/net");
  if (!net.error.empty()) return Observed<PciFunction>::Failed(net.error);
  for (const std::string& name : net.files) {
    Observed<int> ifindex = ReadNetdevIfindex(sysfs_root, name);
    if (ifindex.absent()) continue;  // unregistered between the listing and the read
    if (ifindex.failed()) return Observed<PciFunction>::Failed(ifindex.error, ifindex.errnum);
    function.netdevs.push_back(PciNetdev{name, ifindex.value});
  }
  DirList rdma = ListSubdirectories(dir + "/infiniband");
  if (!rdma.error.empty()) return Observed<PciFunction>::Failed(rdma.error);
  function.rdma_devices = std::move(rdma.files);
  return Observed<PciFunction>::Ok(std::move(function));
}

}  // namespace roceqos
