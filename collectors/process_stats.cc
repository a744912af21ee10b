#include "collectors/process_stats.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

namespace roceqos {
namespace {

std::optional<uint64_t> ToU64(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::vector<std::string_view> SplitSpaces(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

// The rest of the line that starts with `key` (e.g. "VmRSS:"), nullopt when no line does.
std::optional<std::string_view> LineValue(std::string_view content, std::string_view key) {
  size_t pos = 0;
  while (pos < content.size()) {
    size_t end = content.find('\n', pos);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = content.substr(pos, end - pos);
    if (line.starts_with(key)) return line.substr(key.size());
    pos = end + 1;
  }
  return std::nullopt;
}

Result<uint64_t> KilobytesField(std::string_view content, std::string_view key) {
  auto value = LineValue(content, key);
  if (!value) return MakeError(0, fmt::format("status: no \"{}\" line", key));
  auto words = SplitSpaces(*value);
  auto kb = words.size() == 2 && words[1] == "kB" ? ToU64(words[0]) : std::nullopt;
  if (!kb || *kb > std::numeric_limits<uint64_t>::max() / 1024) {
    return MakeError(0, fmt::format("status: \"{}\" is not \"<number> kB\"", key));
  }
  return *kb * 1024;
}

Result<std::string> ReadWhole(const std::string& path) {
  constexpr size_t kMaxBytes = size_t{64} * 1024;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(errno, fmt::format("open {}: {}", path, std::strerror(errno)));
  std::string content;
  std::array<char, 4096> buf{};
  for (;;) {
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return MakeError(err, fmt::format("read {}: {}", path, std::strerror(err)));
    }
    if (n == 0) break;
    content.append(buf.data(), static_cast<size_t>(n));
    if (content.size() > kMaxBytes) break;  // procfs files of a process are far smaller
  }
  close(fd);
  return content;
}

Result<double> CountOpenFds(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr)
    return MakeError(errno, fmt::format("opendir {}: {}", dir, std::strerror(errno)));
  double count = 0;
  while (const dirent* entry = readdir(d)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(d);
  return count;
}

}  // namespace

Result<ProcStatTimes> ParseProcStat(std::string_view content) {
  const size_t paren = content.rfind(')');
  if (paren == std::string_view::npos) return MakeError(0, "stat: no \")\" after the command name");
  // Fields after the command name start at field 3 (state): field N is words[N - 3].
  const auto words = SplitSpaces(content.substr(paren + 1));
  if (words.size() < 20) {
    return MakeError(
        0, fmt::format("stat: {} fields after the command name, want 20 or more", words.size()));
  }
  const auto utime = ToU64(words[14 - 3]);
  const auto stime = ToU64(words[15 - 3]);
  const auto start = ToU64(words[22 - 3]);
  if (!utime || !stime || !start)
    return MakeError(0, "stat: utime, stime or starttime not a number");
  return ProcStatTimes{.utime_ticks = *utime, .stime_ticks = *stime, .starttime_ticks = *start};
}

Result<ProcStatusMemory> ParseProcStatus(std::string_view content) {
  auto rss = KilobytesField(content, "VmRSS:");
  if (!rss) return rss.error();
  auto size = KilobytesField(content, "VmSize:");
  if (!size) return size.error();
  return ProcStatusMemory{.resident_bytes = *rss, .virtual_bytes = *size};
}

Result<double> ParseMaxOpenFiles(std::string_view content) {
  auto value = LineValue(content, "Max open files");
  if (!value) return MakeError(0, "limits: no \"Max open files\" line");
  // "Max open files   <soft>   <hard>   files"
  const auto words = SplitSpaces(*value);
  if (words.size() != 3 || words[2] != "files") {
    return MakeError(0, "limits: \"Max open files\" is not \"<soft> <hard> files\"");
  }
  if (words[0] == "unlimited") return std::numeric_limits<double>::infinity();
  auto soft = ToU64(words[0]);
  if (!soft) return MakeError(0, "limits: soft \"Max open files\" is not a number");
  return static_cast<double>(*soft);
}

Result<uint64_t> ParseBootTime(std::string_view content) {
  auto value = LineValue(content, "btime ");
  if (!value) return MakeError(0, "stat: no \"btime\" line");
  const auto words = SplitSpaces(*value);
  auto seconds = words.size() == 1 ? ToU64(words[0]) : std::nullopt;
  if (!seconds) return MakeError(0, "stat: \"btime\" is not a number");
  return *seconds;
}

Result<ProcessStats> ReadProcessStats(const std::string& procfs) {
  const std::string self = procfs + "/self/";
  auto stat_text = ReadWhole(self + "stat");
  if (!stat_text) return stat_text.error();
  // The parsers name the file by its base name ("stat: ..."); the prefix makes it the full path.
  auto times = ParseProcStat(*stat_text);
  if (!times) return MakeError(0, self + times.error().message);
  auto status_text = ReadWhole(self + "status");
  if (!status_text) return status_text.error();
  auto memory = ParseProcStatus(*status_text);
  if (!memory) return MakeError(0, self + memory.error().message);
  auto limits_text = ReadWhole(self + "limits");
  if (!limits_text) return limits_text.error();
  auto max_fds = ParseMaxOpenFiles(*limits_text);
  if (!max_fds) return MakeError(0, self + max_fds.error().message);
  auto boot_text = ReadWhole(procfs + "/stat");
  if (!boot_text) return boot_text.error();
  auto boot = ParseBootTime(*boot_text);
  if (!boot) return MakeError(0, procfs + "/" + boot.error().message);
  auto fds = CountOpenFds(self + "fd");
  if (!fds) return fds.error();
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return ProcessStats{
      .cpu_seconds = static_cast<double>(times->utime_ticks + times->stime_ticks) / tick,
      .resident_bytes = static_cast<double>(memory->resident_bytes),
      .virtual_bytes = static_cast<double>(memory->virtual_bytes),
      .open_fds = *fds,
      .max_fds = *max_fds,
      .start_time_seconds =
          static_cast<double>(*boot) + static_cast<double>(times->starttime_ticks) / tick};
}

}  // namespace roceqos
