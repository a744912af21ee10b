#include "collectors/lldp/control_socket.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>

namespace roceqos::lldp {
namespace {

// __SO_ACCEPTCON from <linux/net.h>: unix_seq_show prints it in Flags for a listening socket.
constexpr uint32_t kSoAcceptCon = 1U << 16;
// Num, RefCount, Protocol, Flags, Type, St, Inode, then the path when the socket is bound.
constexpr int kFieldsBeforePath = 7;
constexpr int kFlagsField = 3;

// The next space-separated field of `rest`, consumed with the spaces before it.
std::string_view NextField(std::string_view& rest) {
  const size_t start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(start);
  const size_t end = std::min(rest.find(' '), rest.size());
  std::string_view field = rest.substr(0, end);
  rest.remove_prefix(end);
  return field;
}

}  // namespace

std::optional<UnixSocketEntry> ParseUnixSocketLine(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  std::string_view rest = line;
  UnixSocketEntry entry;
  for (int i = 0; i < kFieldsBeforePath; ++i) {
    const std::string_view field = NextField(rest);
    if (field.empty()) return std::nullopt;
    if (i == 0 && field.back() != ':') return std::nullopt;  // "Num" of the header line
    if (i == kFlagsField) {
      uint32_t flags = 0;
      const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), flags, 16);
      if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
      entry.listening = (flags & kSoAcceptCon) != 0;
    }
  }
  // One space, then the path as bound: it may itself contain spaces.
  if (!rest.empty()) entry.path = std::string(rest.substr(1));
  return entry;
}

bool ListenerBoundAt(const std::string& path, const std::string& proc_net_unix) {
  std::ifstream in(proc_net_unix);
  std::string line;
  while (std::getline(in, line)) {
    const std::optional<UnixSocketEntry> entry = ParseUnixSocketLine(line);
    if (entry && entry->listening && entry->path == path) return true;
  }
  return false;
}

bool Unlinked(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_nlink == 0;
}

bool SocketReplaced(const std::string& path, const std::string& proc_net_unix) {
  return Unlinked(path) && ListenerBoundAt(path, proc_net_unix);
}

}  // namespace roceqos::lldp
