#include "exporter/qos/remediate_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace roceqos {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
      continue;
    }
    out += c;
  }
  return out + "\"";
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

Result<PersistedDevice> ParseDevice(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap()) return MakeError(EINVAL, where + ": not an object");
  PersistedDevice d;
  try {
    d.policy_hash = node["policy_hash"].as<std::string>();
    d.attempts = node["attempts"].as<int>();
    d.gave_up = node["gave_up"].as<bool>();
    d.apply_in_progress = node["apply_in_progress"].as<bool>();
    if (const YAML::Node next = node["next_allowed_unix"]; next && !next.IsNull()) {
      const double seconds = next.as<double>();
      if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e11)
        return MakeError(EINVAL, where + ": next_allowed_unix out of range");
      d.next_allowed = std::chrono::system_clock::time_point(
          std::chrono::duration_cast<std::chrono::system_clock::duration>(
              std::chrono::duration<double>(seconds)));
    }
  } catch (const YAML::Exception& e) {
    return MakeError(EINVAL, fmt::format("{}: {}", where, e.msg));
  }
  if (d.attempts < 0 || d.attempts > 1000000)
    return MakeError(EINVAL, where + ": attempts out of range");
  return d;
}

}  // namespace

std::string SerializeRemediationState(const PersistedState& state) {
  std::string out = "{\"version\": 1, \"devices\": {";
  bool first = true;
  for (const auto& [netdev, d] : state) {
    std::string next = "null";
    if (d.next_allowed)
      next = fmt::format("{:.3f}",
                         std::chrono::duration<double>(d.next_allowed->time_since_epoch()).count());
    out += fmt::format(
        "{}\n  {}: {{\"policy_hash\": {}, \"attempts\": {}, \"gave_up\": {}, "
        "\"next_allowed_unix\": {}, \"apply_in_progress\": {}}}",
        first ? "" : ",", JsonString(netdev), JsonString(d.policy_hash), d.attempts, d.gave_up,
        next, d.apply_in_progress);
    first = false;
  }
  return out + (first ? "}}\n" : "\n}}\n");
}

Result<PersistedState> ParseRemediationState(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);  // JSON is a subset of the YAML flow style
  } catch (const YAML::Exception& e) {
    return MakeError(EINVAL, fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  if (!root.IsMap() || !root["version"] || !root["devices"])
    return MakeError(EINVAL, path + ": expected {\"version\": 1, \"devices\": {...}}");
  try {
    if (root["version"].as<int>() != 1)
      return MakeError(EINVAL, path + ": unsupported version " + root["version"].as<std::string>());
  } catch (const YAML::Exception& e) {
    return MakeError(EINVAL, fmt::format("{}: version: {}", path, e.msg));
  }
  if (!root["devices"].IsMap()) return MakeError(EINVAL, path + ": devices is not an object");
  PersistedState state;
  for (const auto& entry : root["devices"]) {
    const std::string netdev = entry.first.as<std::string>();
    auto device = ParseDevice(entry.second, fmt::format("{}: devices.{}", path, netdev));
    if (!device) return device.error();
    state[netdev] = *device;
  }
  return state;
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

Result<PersistedState> RemediationStore::Load() const {
  std::ifstream in(path_);
  if (!in) {
    if (errno == ENOENT) return PersistedState{};
    return ErrnoError("open " + path_);
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseRemediationState(text.str(), path_);
}

Result<void> RemediationStore::Save(const PersistedState& state) const {
  const std::filesystem::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  if (ec)
    return MakeError(ec.value(), "create " + target.parent_path().string() + ": " + ec.message());
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoError("open " + tmp);
  Result<void> written = WriteAndSync(fd, SerializeRemediationState(state), tmp);
  ::close(fd);
  if (!written) return written;
  if (::rename(tmp.c_str(), path_.c_str()) != 0) return ErrnoError("rename " + tmp);
  // The rename itself is durable only once the directory is synced.
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace roceqos
