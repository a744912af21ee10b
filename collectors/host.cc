#include "collectors/host.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/ethtool.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "base/trim.h"
#include "collectors/capture/tape.h"
#include "collectors/ethtool_ioctl.h"
#include "collectors/inbox_cc_params.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

Result<void> WriteMarker(const std::string& dir, const std::string& marker) {
  if (tape::Replaying())
    return MakeError(EROFS, fmt::format("write {}: refused in replay", marker));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int errnum = errno;
    return MakeError(errnum, fmt::format("--qos.configfs-tos: cannot write the marker {} that "
                                         "makes a killed process's group removable: {}",
                                         marker, std::strerror(errnum)));
  }
  ::fsync(fd);
  ::close(fd);
  return {};
}

// The configfs section of a read (marker, mkdir, read, rmdir, unlink) and the orphan sweep,
// exclusive among every HostReader that shares the markers directory: the sampler's and the
// remediation worker's in one process, and another exporter on the node. Unserialized, one
// reader's EEXIST path unlinked the marker of a group another had just created (a kill then left
// an unmarked group no start removes), one reader's unlink after its rmdir removed a marker
// another had written for its own coming mkdir, and a reader found a group about to be removed
// under it. flock(2) on the directory: held per open file description, so two threads exclude
// each other as two processes do, and a killed holder releases it.
class ConfigfsSection {
 public:
  static Result<ConfigfsSection> Enter(const std::string& markers_dir) {
    std::error_code ec;
    std::filesystem::create_directories(markers_dir, ec);
    const int fd = ::open(markers_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      const int errnum = errno;
      return MakeError(errnum, fmt::format("--qos.configfs-tos: cannot open the marker directory "
                                           "{}: {}",
                                           markers_dir, std::strerror(errnum)));
    }
    int rc = 0;
    while ((rc = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      const int errnum = errno;
      ::close(fd);
      return MakeError(errnum, fmt::format("--qos.configfs-tos: flock {}: {}", markers_dir,
                                           std::strerror(errnum)));
    }
    return ConfigfsSection(fd);
  }
  ConfigfsSection(ConfigfsSection&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ConfigfsSection& operator=(ConfigfsSection&&) = delete;
  ConfigfsSection(const ConfigfsSection&) = delete;
  ConfigfsSection& operator=(const ConfigfsSection&) = delete;
  ~ConfigfsSection() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
  }

 private:
  explicit ConfigfsSection(int fd) : fd_(fd) {}
  int fd_;
};

template <typename T, typename Parse>
Observed<T> ReadObserved(const std::string& path, Parse parse) {
  FileRead file = ReadSmallFile(path);
  if (file.missing) return Observed<T>::Absent();
  if (!file.error.empty()) return Observed<T>::Failed(file.error, file.errnum);
  auto parsed = parse(file.content);
  if (!parsed) return Observed<T>::Failed(fmt::format("{}: {}", path, parsed.error().message));
  return Observed<T>::Ok(static_cast<T>(*parsed));
}

}  // namespace

Result<int> ParseSmallInt(std::string_view content, int lo, int hi) {
  std::string_view text = TrimWhitespace(content);
  if (text.empty()) return MakeError(EINVAL, "empty, expected an integer");
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    return MakeError(EINVAL, fmt::format("\"{}\" is not an integer", text));
  if (value < lo || value > hi)
    return MakeError(ERANGE, fmt::format("{} is outside {}..{}", value, lo, hi));
  return value;
}

Result<bool> ParseEnableFlag(std::string_view content) {
  auto value = ParseSmallInt(content, 0, 1);
  if (!value) return value.error();
  return *value == 1;
}

Result<std::optional<uint8_t>> ParseMofedTrafficClass(std::string_view content) {
  // MOFED traffic_class_show: "Global tclass=%d\n" only when a global value is set, then one
  // line per match rule. No global line means "not set".
  constexpr std::string_view kPrefix = "Global tclass=";
  std::string_view rest = content;
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    std::string_view line = TrimWhitespace(rest.substr(0, eol));
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
    if (line.substr(0, kPrefix.size()) != kPrefix) continue;
    auto value = ParseSmallInt(line.substr(kPrefix.size()), 0, 255);
    if (!value)
      return MakeError(EINVAL, fmt::format("bad \"{}\": {}", line, value.error().message));
    return std::optional<uint8_t>(static_cast<uint8_t>(*value));
  }
  return std::optional<uint8_t>();
}

Observed<uint8_t> RoceTosState::Effective() const {
  if (mofed_tclass.failed()) return Observed<uint8_t>::Failed(mofed_tclass.error);
  if (mofed_tclass.ok() && mofed_tclass.value.has_value())
    return Observed<uint8_t>::Ok(*mofed_tclass.value);
  if (configfs_tos.ok() || configfs_tos.failed()) return configfs_tos;
  // MOFED file present but unset and no configfs: the ToS is "not set", which the kernel treats
  // as 0 for new QPs.
  if (mofed_tclass.ok()) return Observed<uint8_t>::Ok(0);
  return Observed<uint8_t>::Absent();
}

namespace {

Result<int> ParseDscp(std::string_view c) { return ParseSmallInt(c, 0, 63); }
Result<int> ParsePrio(std::string_view c) { return ParseSmallInt(c, 0, kNumPriorities - 1); }

// The inbox driver has no per-priority enable (firmware configuration), only the CNP marking
// among the fields of DcqcnState: np_cnp_dscp and np_cnp_prio (docs/kernel-interfaces.md §7.4).
DcqcnState ReadInboxCnpMarking(const HostPaths& paths, std::string_view netdev) {
  DcqcnState state;
  std::optional<std::string> dir = InboxCcParamsDir(paths, netdev);
  if (!dir || !IsDirectory(*dir)) return state;
  state.cnp_dscp = ReadObserved<uint8_t>(*dir + "/np_cnp_dscp", ParseDscp);
  state.cnp_802p_prio = ReadObserved<uint8_t>(*dir + "/np_cnp_prio", ParsePrio);
  return state;
}

}  // namespace

DcqcnState HostReader::ReadDcqcn(std::string_view netdev) const {
  DcqcnState state;
  std::string ecn = fmt::format("{}/class/net/{}/ecn", paths_.sysfs, netdev);
  // Not MOFED, or a VF/SF: every field absent, but the CNP marking of an opted-in inbox driver.
  if (!IsDirectory(ecn)) return ReadInboxCnpMarking(paths_, netdev);
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    state.np_enabled[prio] = ReadObserved<bool>(
        fmt::format("{}/{}/enable/{}", ecn, DcqcnRoleName(DcqcnRole::kNotificationPoint), prio),
        ParseEnableFlag);
    state.rp_enabled[prio] = ReadObserved<bool>(
        fmt::format("{}/{}/enable/{}", ecn, DcqcnRoleName(DcqcnRole::kReactionPoint), prio),
        ParseEnableFlag);
  }
  state.cnp_dscp = ReadObserved<uint8_t>(ecn + "/roce_np/cnp_dscp", ParseDscp);
  state.cnp_802p_prio = ReadObserved<uint8_t>(ecn + "/roce_np/cnp_802p_prio", ParsePrio);
  return state;
}

RoceTosState HostReader::ReadRoceTos(std::string_view rdma_device, uint32_t port) const {
  RoceTosState state;
  state.mofed_tclass = ReadObserved<std::optional<uint8_t>>(
      fmt::format("{}/class/infiniband/{}/tc/{}/traffic_class", paths_.sysfs, rdma_device, port),
      ParseMofedTrafficClass);

  std::string rdma_cm = paths_.configfs + "/rdma_cm";
  if (!IsDirectory(rdma_cm)) return state;  // configfs not mounted or rdma_cm not loaded
  std::string group = fmt::format("{}/{}", rdma_cm, rdma_device);
  const std::string marker = fmt::format("{}/{}", paths_.configfs_markers, rdma_device);
  bool created = false;
  // A replay with the flag reads what the capture run read after its own mkdir (in the bundle).
  const bool replayed_mkdir = configfs_mkdir_ && tape::Replaying();
  std::optional<ConfigfsSection> section;
  if (configfs_mkdir_ && !replayed_mkdir) {
    Result<ConfigfsSection> entered = ConfigfsSection::Enter(paths_.configfs_markers);
    if (entered) {
      section.emplace(std::move(*entered));
    } else if (!IsDirectory(group)) {  // an existing group is still read; none is created
      state.configfs_tos =
          Observed<uint8_t>::Failed(entered.error().message, entered.error().errnum);
      return state;
    }
  }
  if (!IsDirectory(group) && !replayed_mkdir) {
    if (!configfs_mkdir_) return state;  // reading would need a mkdir: not allowed
    // The marker goes first: a kill after the mkdir leaves a group the next start knows is ours.
    if (Result<void> marked = WriteMarker(paths_.configfs_markers, marker); !marked) {
      state.configfs_tos = Observed<uint8_t>::Failed(marked.error().message, marked.error().errnum);
      return state;
    }
    if (::mkdir(group.c_str(), 0755) == 0) {
      created = true;
    } else {
      const int errnum = errno;
      ::unlink(marker.c_str());
      // EEXIST: created meanwhile outside the section (an administrator); not ours to remove.
      if (errnum != EEXIST) {
        state.configfs_tos = Observed<uint8_t>::Failed(
            fmt::format("mkdir {}: {}", group, std::strerror(errnum)), errnum);
        return state;
      }
    }
  }
  auto tos = [](std::string_view c) { return ParseSmallInt(c, 0, 255); };
  state.configfs_tos =
      ReadObserved<uint8_t>(fmt::format("{}/ports/{}/default_roce_tos", group, port), tos);
  if (created) {
    if (::rmdir(group.c_str()) != 0) {
      // The value is good, but leaving the group behind is a side effect the operator must see;
      // the marker stays, so the next start removes it.
      if (state.configfs_tos.ok())
        state.configfs_tos = Observed<uint8_t>::Failed(
            fmt::format("rmdir {} after reading: {}", group, std::strerror(errno)));
    } else {
      ::unlink(marker.c_str());
    }
  }
  return state;
}

std::vector<std::string> HostReader::RemoveOrphanConfigfsGroups() const {
  std::vector<std::string> removed;
  if (tape::Replaying()) return removed;  // a replay never changes this host
  std::error_code ec;
  if (!std::filesystem::is_directory(paths_.configfs_markers, ec)) return removed;
  Result<ConfigfsSection> section = ConfigfsSection::Enter(paths_.configfs_markers);
  if (!section) return removed;  // the reads report it (they need the same directory)
  for (const auto& entry : std::filesystem::directory_iterator(paths_.configfs_markers, ec)) {
    const std::string device = entry.path().filename().string();
    const std::string group = fmt::format("{}/rdma_cm/{}", paths_.configfs, device);
    if (IsDirectory(group)) {
      if (::rmdir(group.c_str()) != 0) continue;  // marker kept: tried again next start
      removed.push_back(device);
    }
    std::filesystem::remove(entry.path(), ec);
  }
  return removed;
}

Observed<int> HostReader::ReadTcpEcn() const {
  return ReadObserved<int>(paths_.procfs + "/sys/net/ipv4/tcp_ecn",
                           [](std::string_view c) { return ParseSmallInt(c, 0, 2); });
}

Observed<uint16_t> ReadPfcStormTimeout(std::string_view netdev) {
  // Checked before opening a socket; EthtoolIoctl would refuse the name too, but with EINVAL.
  if (netdev.empty() || netdev.size() >= IFNAMSIZ)
    return Observed<uint16_t>::Failed(fmt::format("bad interface name \"{}\"", netdev));
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Observed<uint16_t>::Failed(fmt::format("socket: {}", std::strerror(errno)));

  // struct ethtool_tunable ends in a flexible array that holds the value (u16 here): build it in
  // an aligned byte buffer and copy the fields in and out.
  alignas(ethtool_tunable) std::byte buffer[sizeof(ethtool_tunable) + sizeof(uint64_t)]{};
  ethtool_tunable tunable{};
  tunable.cmd = ETHTOOL_GTUNABLE;
  tunable.id = ETHTOOL_PFC_PREVENTION_TOUT;
  tunable.type_id = ETHTOOL_TUNABLE_U16;
  tunable.len = sizeof(uint16_t);
  std::memcpy(buffer, &tunable, sizeof tunable);

  Result<void> done = EthtoolIoctl(fd, netdev, buffer, "ETHTOOL_GTUNABLE PFC_PREVENTION_TOUT");
  ::close(fd);
  if (!done) {
    if (done.error().NotSupported()) return Observed<uint16_t>::Absent();
    return Observed<uint16_t>::Failed(done.error().message, done.error().errnum);
  }
  uint16_t value = 0;
  std::memcpy(&value, buffer + sizeof(ethtool_tunable), sizeof value);
  return Observed<uint16_t>::Ok(value);
}

}  // namespace roceqos
