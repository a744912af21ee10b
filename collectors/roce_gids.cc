#include "collectors/roce_gids.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <optional>

#include "base/ascii.h"
#include "collectors/pci_function.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

constexpr size_t kGidGroups = 8;
constexpr size_t kGidTextSize = kGidGroups * 5 - 1;  // "xxxx:" x 8 without the last colon
constexpr size_t kMaxRdmaDeviceName = 63;            // IB_DEVICE_NAME_MAX (64) with the NUL

std::string_view WithoutNewline(std::string_view content) {
  if (!content.empty() && content.back() == '\n') content.remove_suffix(1);
  return content;
}

std::optional<uint32_t> ParseIndex(std::string_view name) {
  uint32_t index = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), index);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return index;
}

// One populated entry's attributes. nullopt: the entry emptied since gids/<i> was read (EINVAL).
using EntryRead = Result<std::optional<RoceGid>>;

EntryRead ReadEntryAttrs(const std::string& port_dir, uint32_t index, std::string gid) {
  const std::string type_path = fmt::format("{}/gid_attrs/types/{}", port_dir, index);
  const std::string ndev_path = fmt::format("{}/gid_attrs/ndevs/{}", port_dir, index);
  const FileRead type_file = ReadSmallFile(type_path);
  const FileRead ndev_file = ReadSmallFile(ndev_path);
  for (const FileRead* file : {&type_file, &ndev_file}) {
    if (file->errnum == EINVAL) return std::optional<RoceGid>();  // the entry is gone
    if (file->missing) return MakeError(ENOENT, fmt::format("{}: missing", port_dir));
    if (!file->error.empty()) return MakeError(file->errnum, file->error);
  }
  Result<GidType> type = ParseGidType(type_file.content);
  if (!type) return MakeError(0, fmt::format("{}: {}", type_path, type.error().message));
  const std::string_view netdev = WithoutNewline(ndev_file.content);
  if (!IsNetdevName(netdev))
    return MakeError(0, fmt::format("{}: \"{}\" is not a netdev name", ndev_path, netdev));
  return std::optional<RoceGid>(RoceGid{index, std::move(gid), *type, std::string(netdev)});
}

// gids/<i>: nullopt for the zero GID (an empty entry), else the entry with its attributes.
EntryRead ReadEntry(const std::string& port_dir, uint32_t index) {
  const std::string path = fmt::format("{}/gids/{}", port_dir, index);
  const FileRead file = ReadSmallFile(path);
  if (!file.error.empty() || file.missing)
    return MakeError(file.errnum, file.missing ? path + ": missing" : file.error);
  Result<std::string> gid = ParseGidText(file.content);
  if (!gid) return MakeError(0, fmt::format("{}: {}", path, gid.error().message));
  if (IsZeroGid(*gid)) return std::optional<RoceGid>();
  return ReadEntryAttrs(port_dir, index, std::move(*gid));
}

}  // namespace

Result<std::string> ParseGidText(std::string_view content) {
  const std::string_view text = WithoutNewline(content);
  bool well_formed = text.size() == kGidTextSize;
  for (size_t i = 0; well_formed && i < text.size(); ++i)
    well_formed = (i % 5 == 4) ? text[i] == ':' : IsLowerHexDigit(text[i]);
  if (!well_formed)
    return MakeError(0, fmt::format("\"{}\" is not a GID (eight groups of four hex digits)",
                                    text.substr(0, kGidTextSize + 1)));
  return std::string(text);
}

bool IsZeroGid(std::string_view gid) {
  return std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

Result<GidType> ParseGidType(std::string_view content) {
  const std::string_view text = WithoutNewline(content);
  if (auto type = ValueOf(kGidTypeNames, text)) return *type;
  return MakeError(
      0, fmt::format("\"{}\" is not a GID type (\"IB/RoCE v1\", \"RoCE v2\")", text.substr(0, 32)));
}

bool IsRdmaDeviceName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxRdmaDeviceName && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos;
}

Observed<std::vector<RoceGid>> ReadRoceGids(const std::string& sysfs_root,
                                            std::string_view rdma_device, uint32_t port) {
  using Table = Observed<std::vector<RoceGid>>;
  if (!IsRdmaDeviceName(rdma_device))
    return Table::Failed(fmt::format("\"{}\" is not an RDMA device name", rdma_device));
  const std::string port_dir =
      fmt::format("{}/class/infiniband/{}/ports/{}", sysfs_root, rdma_device, port);
  const DirList listing = ListRegularFiles(port_dir + "/gids");
  if (listing.missing) return Table::Absent();
  if (!listing.error.empty()) return Table::Failed(listing.error);
  std::vector<uint32_t> indices;
  for (const std::string& name : listing.files)
    if (auto index = ParseIndex(name)) indices.push_back(*index);
  std::sort(indices.begin(), indices.end());  // the listing sorts names: "10" before "2"
  std::vector<RoceGid> entries;
  for (uint32_t index : indices) {
    EntryRead entry = ReadEntry(port_dir, index);
    if (!entry) return Table::Failed(entry.error().message, entry.error().errnum);
    if (*entry) entries.push_back(std::move(**entry));
  }
  return Table::Ok(std::move(entries));
}

NetdevRoceGids ReadNetdevRoceGids(const std::string& sysfs_root,
                                  const std::vector<RdmaPort>& ports) {
  std::vector<RoceGid> all;
  for (const RdmaPort& port : ports) {
    NetdevRoceGids table = ReadRoceGids(sysfs_root, port.device, port.port);
    if (table.absent())
      return NetdevRoceGids::Failed(
          fmt::format("{} port {}: no GID table", port.device, port.port));
    if (!table.ok()) return table;
    all.insert(all.end(), table.value.begin(), table.value.end());
  }
  return NetdevRoceGids::Ok(std::move(all));
}

}  // namespace roceqos
