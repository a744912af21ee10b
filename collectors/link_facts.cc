#include "collectors/link_facts.h"

#include <fmt/format.h>

#include <cerrno>
#include <climits>

#include "collectors/host.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

// SR-IOV allows at most 65535 VFs per PF (PCI_SRIOV_TOTAL_VF is 16 bits wide).
constexpr int kMaxVfs = 65535;

template <typename Parse>
Observed<uint32_t> ReadFact(const std::string& path, Parse parse) {
  FileRead file = ReadSmallFile(path);
  if (file.missing) return Observed<uint32_t>::Absent();
  if (!file.error.empty()) return Observed<uint32_t>::Failed(file.error, file.errnum);
  auto value = parse(file.content);
  if (!value) return Observed<uint32_t>::Failed(fmt::format("{}: {}", path, value.error().message));
  return Observed<uint32_t>::Ok(*value);
}

Result<uint32_t> ParseVfCount(std::string_view content) {
  auto count = ParseSmallInt(content, 0, kMaxVfs);
  if (!count) return count.error();
  return static_cast<uint32_t>(*count);
}

}  // namespace

Result<uint32_t> ParseLinkSpeed(std::string_view content) {
  // speed_show prints ethtool_link_ksettings.base.speed with "%d": SPEED_UNKNOWN is -1.
  auto speed = ParseSmallInt(content, -1, INT_MAX);
  if (!speed) return speed.error();
  return static_cast<uint32_t>(*speed < 0 ? 0 : *speed);
}

LinkFacts ReadLinkFacts(const std::string& sysfs_root, std::string_view netdev) {
  const std::string dir = fmt::format("{}/class/net/{}", sysfs_root, netdev);
  LinkFacts facts;
  facts.speed_mbps = ReadFact(dir + "/speed", ParseLinkSpeed);
  // A netdev that is not running answers EINVAL: it has no link, which is a value, not a fault.
  if (facts.speed_mbps.failed() && facts.speed_mbps.errnum == EINVAL)
    facts.speed_mbps = Observed<uint32_t>::Ok(0);
  facts.sriov_numvfs = ReadFact(dir + "/device/sriov_numvfs", ParseVfCount);
  return facts;
}

}  // namespace roceqos
