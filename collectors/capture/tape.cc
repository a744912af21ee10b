#include "collectors/capture/tape.h"

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace roceqos::tape {
namespace {

// The tape: one per process. Replay answers are indexed by key, with a cursor per key.
struct Tape {
  std::mutex mu;
  Bundle recorded;
  std::map<std::pair<int, Blob>, std::vector<NetlinkExchange>> netlink;
  std::map<std::pair<std::string, Blob>, std::vector<IoctlExchange>> ioctls;
  std::map<std::pair<std::string, std::string>, std::vector<FsEntry>> fs;
  std::map<std::string, size_t> cursors;  // "kind|key" -> answers already given
};

std::atomic<Mode> g_mode{Mode::kLive};

Tape& TheTape() {
  static Tape tape;
  return tape;
}

template <typename T>
T Next(std::vector<T>& answers, size_t& cursor) {
  const size_t index = std::min(cursor, answers.size() - 1);
  ++cursor;
  return answers[index];
}

std::string CursorKey(std::string_view kind, std::string_view a, const Blob& b) {
  std::string key(kind);
  key += '|';
  key += a;
  key += '|';
  key.append(reinterpret_cast<const char*>(b.data()), b.size());
  return key;
}

// Appends one attribute (header + payload + padding) to `out`.
void AppendAttr(Blob& out, uint16_t type, const std::byte* payload, size_t len) {
  nlattr header{static_cast<uint16_t>(NLA_HDRLEN + len), type};
  const auto* h = reinterpret_cast<const std::byte*>(&header);
  out.insert(out.end(), h, h + sizeof(header));
  out.insert(out.end(), payload, payload + len);
  out.resize(out.size() + (NLA_ALIGN(len) - len), std::byte{0});
}

// Copies the attributes of `attrs` whose type (without NLA_F_* flags) is in `keep`; IFLA_LINKINFO
// is filtered recursively when `linkinfo` is set.
Blob FilterAttrs(const std::byte* attrs, size_t len, std::initializer_list<uint16_t> keep,
                 bool linkinfo) {
  Blob out;
  size_t offset = 0;
  while (offset + NLA_HDRLEN <= len) {
    nlattr header;
    std::memcpy(&header, attrs + offset, sizeof(header));
    if (header.nla_len < NLA_HDRLEN || header.nla_len > len - offset) break;
    const uint16_t type = header.nla_type & NLA_TYPE_MASK;
    const std::byte* payload = attrs + offset + NLA_HDRLEN;
    const size_t payload_len = header.nla_len - NLA_HDRLEN;
    if (linkinfo && type == IFLA_LINKINFO) {
      // IFLA_INFO_DATA holds bond arp_ip_target and other addresses: keep the kinds only.
      Blob inner = FilterAttrs(payload, payload_len, {IFLA_INFO_KIND, IFLA_INFO_SLAVE_KIND}, false);
      AppendAttr(out, header.nla_type, inner.data(), inner.size());
    } else if (std::find(keep.begin(), keep.end(), type) != keep.end()) {
      AppendAttr(out, header.nla_type, payload, payload_len);
    }
    offset += NLA_ALIGN(header.nla_len);
  }
  return out;
}

// The fixed struct of each ETHTOOL_* command the collectors issue (collectors/ethtool_ioctl.cc
// announces the same commands); 0 for any other.
size_t FixedCommandBytes(uint32_t cmd) {
  switch (cmd) {
    case ETHTOOL_GDRVINFO:
      return sizeof(ethtool_drvinfo);
    case ETHTOOL_GSSET_INFO:
      return sizeof(ethtool_sset_info);
    case ETHTOOL_GSTRINGS:
      return sizeof(ethtool_gstrings);
    case ETHTOOL_GSTATS:
      return sizeof(ethtool_stats);
    case ETHTOOL_GTUNABLE:
      return sizeof(ethtool_tunable);
    case ETHTOOL_GMODULEINFO:
      return sizeof(ethtool_modinfo);
    case ETHTOOL_GMODULEEEPROM:
      return sizeof(ethtool_eeprom);
    default:
      return 0;
  }
}

Blob SanitizeLink(const std::byte* msg, size_t len) {
  constexpr size_t kFixed = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  if (len < kFixed) return Blob(msg, msg + len);
  Blob out(msg, msg + kFixed);
  Blob attrs =
      FilterAttrs(msg + kFixed, len - kFixed,
                  {IFLA_IFNAME, IFLA_MTU, IFLA_MASTER, IFLA_OPERSTATE, IFLA_CARRIER_CHANGES}, true);
  out.insert(out.end(), attrs.begin(), attrs.end());
  const auto new_len = static_cast<uint32_t>(out.size());
  std::memcpy(out.data(), &new_len, sizeof(new_len));  // nlmsghdr.nlmsg_len
  return out;
}

}  // namespace

Mode CurrentMode() { return g_mode.load(std::memory_order_acquire); }

void StartRecording() {
  Tape& tape = TheTape();
  std::lock_guard lock(tape.mu);
  tape.recorded = Bundle{};
  g_mode.store(Mode::kRecord, std::memory_order_release);
}

Bundle StopRecording() {
  Tape& tape = TheTape();
  std::lock_guard lock(tape.mu);
  g_mode.store(Mode::kLive, std::memory_order_release);
  return std::exchange(tape.recorded, Bundle{});
}

void StartReplay(Bundle bundle) {
  Tape& tape = TheTape();
  std::lock_guard lock(tape.mu);
  tape.netlink.clear();
  tape.ioctls.clear();
  tape.fs.clear();
  tape.cursors.clear();
  for (NetlinkExchange& ex : bundle.netlink) {
    auto key = std::make_pair(ex.protocol, NormalizedRequest(ex.request));
    tape.netlink[std::move(key)].push_back(std::move(ex));
  }
  // Bundles written before NormalizedIoctl recorded the whole buffer: matched the same way.
  for (IoctlExchange& ex : bundle.ioctls) {
    tape.ioctls[{ex.ifname, NormalizedIoctl(ex.in)}].push_back(std::move(ex));
  }
  for (FsEntry& entry : bundle.fs) tape.fs[{entry.op, entry.path}].push_back(std::move(entry));
  g_mode.store(Mode::kReplay, std::memory_order_release);
}

void Reset() {
  StopRecording();
  StartReplay(Bundle{});
  g_mode.store(Mode::kLive, std::memory_order_release);
}

void RecordNetlink(NetlinkExchange exchange) {
  if (!Recording()) return;
  exchange.request = NormalizedRequest(exchange.request);
  if (exchange.protocol == NETLINK_ROUTE) {
    for (Blob& reply : exchange.replies) reply = SanitizeRouteDatagram(reply);
  }
  Tape& tape = TheTape();
  std::lock_guard lock(tape.mu);
  tape.recorded.netlink.push_back(std::move(exchange));
}

void RecordIoctl(IoctlExchange exchange) {
  if (!Recording()) return;
  exchange.in = NormalizedIoctl(exchange.in);
  Tape& tape = TheTape();
  std::lock_guard lock(tape.mu);
  tape.recorded.ioctls.push_back(std::move(exchange));
}

void RecordFs(FsEntry entry) {
  if (!Recording()) return;
  Tape& tape = TheTape();
  std::lock_guard lock(tape.mu);
  tape.recorded.fs.push_back(std::move(entry));
}

std::optional<NetlinkExchange> ReplayNetlink(int protocol, const Blob& request) {
  Tape& tape = TheTape();
  std::lock_guard lock(tape.mu);
  const Blob normalized = NormalizedRequest(request);
  auto it = tape.netlink.find({protocol, normalized});
  if (it == tape.netlink.end()) return std::nullopt;
  return Next(it->second, tape.cursors[CursorKey("netlink", std::to_string(protocol), normalized)]);
}

std::optional<IoctlExchange> ReplayIoctl(std::string_view ifname, const Blob& in) {
  Tape& tape = TheTape();
  std::lock_guard lock(tape.mu);
  const Blob normalized = NormalizedIoctl(in);
  auto it = tape.ioctls.find({std::string(ifname), normalized});
  if (it == tape.ioctls.end()) return std::nullopt;
  return Next(it->second, tape.cursors[CursorKey("ioctl", ifname, normalized)]);
}

std::optional<FsEntry> ReplayFs(std::string_view op, std::string_view path) {
  Tape& tape = TheTape();
  std::lock_guard lock(tape.mu);
  auto it = tape.fs.find({std::string(op), std::string(path)});
  if (it == tape.fs.end()) return std::nullopt;
  return Next(it->second, tape.cursors[CursorKey("fs", op, Blob{}) + std::string(path)]);
}

Blob NormalizedRequest(const Blob& request) {
  Blob out = request;
  if (out.size() >= sizeof(nlmsghdr)) {
    const uint32_t zero = 0;
    std::memcpy(out.data() + offsetof(nlmsghdr, nlmsg_seq), &zero, sizeof(zero));
    std::memcpy(out.data() + offsetof(nlmsghdr, nlmsg_pid), &zero, sizeof(zero));
  }
  return out;
}

Blob NormalizedIoctl(const Blob& command) {
  uint32_t cmd = 0;
  if (command.size() < sizeof(cmd)) return command;
  std::memcpy(&cmd, command.data(), sizeof(cmd));
  const size_t fixed = FixedCommandBytes(cmd);
  if (fixed == 0 || command.size() <= fixed) return command;
  return Blob(command.begin(), command.begin() + static_cast<std::ptrdiff_t>(fixed));
}

Blob SanitizeRouteDatagram(const Blob& datagram) {
  Blob out;
  size_t offset = 0;
  while (offset + NLMSG_HDRLEN <= datagram.size()) {
    nlmsghdr header;
    std::memcpy(&header, datagram.data() + offset, sizeof(header));
    if (header.nlmsg_len < NLMSG_HDRLEN || header.nlmsg_len > datagram.size() - offset) break;
    const std::byte* msg = datagram.data() + offset;
    Blob kept = header.nlmsg_type == RTM_NEWLINK ? SanitizeLink(msg, header.nlmsg_len)
                                                 : Blob(msg, msg + header.nlmsg_len);
    out.insert(out.end(), kept.begin(), kept.end());
    out.resize(NLMSG_ALIGN(out.size()), std::byte{0});
    offset += NLMSG_ALIGN(header.nlmsg_len);
  }
  // Anything after the last whole message is kept as it came: replay reports it as the
  // collectors would have.
  if (offset < datagram.size()) out.insert(out.end(), datagram.begin() + offset, datagram.end());
  return out;
}

}  // namespace roceqos::tape
