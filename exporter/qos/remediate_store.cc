#include "exporter/qos/remediate_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "base/regular_file.h"

namespace roceqos {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// The file's strings are names the exporter wrote: device identities ("pci:<address>",
// "netdev:<name>"), netdev names and hex fingerprints. Any other byte (a control character, or
// one yaml-cpp would read as part of a UTF-8 sequence) cannot round-trip through the JSON writer,
// so the file is refused rather than loaded as something else; enforce then stays suspended
// (state_unreadable) instead of starting from a history it cannot trust.
bool PrintableAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

Error ErrnoError(const std::string& what) {
  const int errnum = errno;
  return Error{errnum, fmt::format("{}: {}", what, std::strerror(errnum))};
}

// Writes all of `text` and fsyncs it, so the rename publishes complete content.
Result<void> WriteAndSync(int fd, const std::string& text, const std::string& tmp) {
  for (size_t off = 0; off < text.size();) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write " + tmp);
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return ErrnoError("fsync " + tmp);
  return {};
}

// A monotonic time field: null/absent is nullopt; an integer of nanoseconds in
// [0, kMaxPersistedMonotonic], larger ones clamped (no conversion may overflow).
Result<std::optional<std::chrono::nanoseconds>> ParseMonotonic(const YAML::Node& node,
                                                               const std::string& where) {
  if (!node || node.IsNull()) return std::optional<std::chrono::nanoseconds>();
  long long ns = 0;
  if (!node.IsScalar() || !YAML::convert<long long>::decode(node, ns) || ns < 0)
    return MakeError(EINVAL, where + ": not a count of nanoseconds");
  return std::optional(std::min(std::chrono::nanoseconds(ns), kMaxPersistedMonotonic));
}

// A scalar of type T, or an error naming the key (YAML's own conversions throw).
template <typename T>
Result<T> Scalar(const YAML::Node& map, const char* key, const std::string& where) {
  const YAML::Node node = map[key];
  T value{};
  if (!node || !node.IsScalar() || !YAML::convert<T>::decode(node, value))
    return MakeError(EINVAL, fmt::format("{}: {} missing or of the wrong type", where, key));
  return value;
}

Result<PersistedDevice> ParseDevice(const YAML::Node& node, int version, const std::string& where) {
  if (!node.IsMap()) return MakeError(EINVAL, where + ": not an object");
  PersistedDevice d;
  auto attempts = Scalar<int>(node, "attempts", where);
  auto gave_up = Scalar<bool>(node, "gave_up", where);
  auto in_progress = Scalar<bool>(node, "apply_in_progress", where);
  if (!attempts) return attempts.error();
  if (!gave_up) return gave_up.error();
  if (!in_progress) return in_progress.error();
  if (*attempts < 0 || *attempts > 1000000)
    return MakeError(EINVAL, where + ": attempts out of range");
  d.attempts = *attempts;
  d.gave_up = *gave_up;
  d.apply_in_progress = *in_progress;
  // Versions 1 and 2 held wall-clock times, which are not comparable with the monotonic clock.
  if (version == 3) {
    auto next = ParseMonotonic(node["next_allowed_ns"], where + ".next_allowed_ns");
    auto seen = ParseMonotonic(node["last_seen_ns"], where + ".last_seen_ns");
    if (!next) return next.error();
    if (!seen) return seen.error();
    d.next_allowed = *next;
    d.last_seen = *seen;
  }
  if (const YAML::Node netdev = node["netdev"]; netdev && netdev.IsScalar())
    d.netdev = netdev.Scalar();
  if (!PrintableAscii(d.netdev)) return MakeError(EINVAL, where + ": netdev is not printable");
  return d;
}

std::string NsText(const std::optional<std::chrono::nanoseconds>& t) {
  return t ? fmt::format("{}", t->count()) : "null";
}

Result<std::map<std::string, PersistedDevice>> ParseDevices(const YAML::Node& devices, int version,
                                                            const std::string& path) {
  if (!devices.IsMap()) return MakeError(EINVAL, path + ": devices is not an object");
  std::map<std::string, PersistedDevice> state;
  for (const auto& entry : devices) {
    if (!entry.first.IsScalar()) return MakeError(EINVAL, path + ": a device key is not a string");
    const std::string key = entry.first.Scalar();
    // Checked before the key is quoted in any message: it may hold any byte.
    if (!PrintableAscii(key))
      return MakeError(EINVAL, path + ": a device key is not printable ASCII");
    auto device = ParseDevice(entry.second, version, fmt::format("{}: devices.{}", path, key));
    if (!device) return device.error();
    if (version == 1) {
      device->netdev = key;
      state["netdev:" + key] = *device;
    } else {
      state[key] = *device;
    }
  }
  return state;
}

Result<PersistedState> ParseRoot(const YAML::Node& root, const std::string& path) {
  if (!root.IsMap() || !root["version"] || !root["devices"])
    return MakeError(EINVAL, path + ": expected {\"version\": 3, \"devices\": {...}}");
  int version = 0;
  if (!root["version"].IsScalar() || !YAML::convert<int>::decode(root["version"], version) ||
      version < 1 || version > 3)
    return MakeError(EINVAL, path + ": unsupported version");
  PersistedState state;
  if (version == 3) {
    auto boot = Scalar<std::string>(root, "boot_id", path);
    auto saved = ParseMonotonic(root["saved_at_ns"], path + ": saved_at_ns");
    if (!boot) return boot.error();
    if (!saved) return saved.error();
    if (!PrintableAscii(*boot)) return MakeError(EINVAL, path + ": boot_id is not printable");
    state.boot_id = *boot;
    state.saved_at = saved->value_or(std::chrono::nanoseconds(0));
  }
  auto devices = ParseDevices(root["devices"], version, path);
  if (!devices) return devices.error();
  state.devices = std::move(*devices);
  return state;
}

// The rename is durable only once the directory holding it is synced.
Result<void> SyncDirectory(const std::string& dir) {
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ErrnoError("open " + dir);
  const int synced = ::fsync(dfd);
  Result<void> result;
  if (synced != 0) result = ErrnoError("fsync " + dir);
  ::close(dfd);
  return result;
}

}  // namespace

std::string SerializeRemediationState(const PersistedState& state) {
  std::string out =
      fmt::format("{{\"version\": 3, \"boot_id\": {}, \"saved_at_ns\": {}, \"devices\": {{",
                  JsonString(state.boot_id), state.saved_at.count());
  bool first = true;
  for (const auto& [identity, d] : state.devices) {
    out += fmt::format(
        "{}\n  {}: {{\"netdev\": {}, \"attempts\": {}, \"gave_up\": {}, \"next_allowed_ns\": {}, "
        "\"apply_in_progress\": {}, \"last_seen_ns\": {}}}",
        first ? "" : ",", JsonString(identity), JsonString(d.netdev), d.attempts, d.gave_up,
        NsText(d.next_allowed), d.apply_in_progress, NsText(d.last_seen));
    first = false;
  }
  return out + (first ? "}}\n" : "\n}}\n");
}

Result<PersistedState> ParseRemediationState(const std::string& text, const std::string& path) {
  // yaml-cpp throws on malformed input and on some conversions; nothing may escape this parser.
  try {
    return ParseRoot(YAML::Load(text), path);  // JSON is a subset of the YAML flow style
  } catch (const std::exception& e) {
    return MakeError(EINVAL, fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

std::string DefaultRemediationStatePath() {
  // systemd sets STATE_DIRECTORY to the StateDirectory= paths, colon-separated.
  if (const char* dirs = std::getenv("STATE_DIRECTORY"); dirs != nullptr && *dirs != '\0') {
    std::string first(dirs);
    first = first.substr(0, first.find(':'));
    return first + "/remediation.json";
  }
  return "/var/lib/roce-qos-exporter/remediation.json";
}

Result<PersistedState> RemediationStore::Load() {
  // A symlink at the path is refused: the file is the exporter's own, never a link to elsewhere.
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    return MakeError(ELOOP, path_ + ": is a symlink; the state file must be a regular file");
  Result<std::string> text = ReadRegularFile(path_, kMaxStateFileBytes);
  if (!text) {
    // No file (or not even its directory): the first start.
    if (text.error().errnum == ENOENT || text.error().errnum == ENOTDIR) return PersistedState{};
    return text.error();
  }
  return ParseRemediationState(*text, path_);
}

Result<void> RemediationStore::Save(const PersistedState& state) {
  const std::filesystem::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  if (ec)
    return MakeError(ec.value(), "create " + target.parent_path().string() + ": " + ec.message());
  const std::string tmp = path_ + ".tmp";
  // A stale temporary (or a symlink planted in its place) is removed, never followed.
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) return ErrnoError("unlink " + tmp);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoError("open " + tmp);
  Result<void> written = WriteAndSync(fd, SerializeRemediationState(state), tmp);
  ::close(fd);
  if (!written) return written;
  if (::rename(tmp.c_str(), path_.c_str()) != 0) return ErrnoError("rename " + tmp);
  return SyncDirectory(target.has_parent_path() ? target.parent_path().string() : ".");
}

std::string CurrentBootId() {
  Result<std::string> text = ReadRegularFile("/proc/sys/kernel/random/boot_id", 64);
  if (!text) return "";
  std::string id = *text;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return PrintableAscii(id) ? id : "";
}

}  // namespace roceqos
