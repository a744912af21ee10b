#include "collectors/dcqcn_params.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "collectors/inbox_cc_params.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

std::string_view TrimSpace(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Reads every regular file of one role directory into `values`; subdirectories (enable/) are
// skipped. Returns false only when the directory exists but cannot be listed.
bool ReadRole(const fs::path& dir, std::map<std::string, uint64_t>* values,
              std::vector<std::string>* errors) {
  DirList list = ListRegularFiles(dir.string());
  if (list.missing) return true;  // one role missing: the other may exist
  if (!list.error.empty()) {
    errors->push_back(list.error);
    return false;
  }
  for (const std::string& name : list.files) {
    const fs::path path = dir / name;
    FileRead file = ReadSmallFile(path.string());
    if (file.missing) continue;  // removed while listing
    if (!file.error.empty()) {
      errors->push_back(file.error);
      continue;
    }
    Result<uint64_t> value = ParseDcqcnParam(file.content);
    if (!value) {
      errors->push_back(fmt::format("{}: {}", path.string(), value.error().message));
      continue;
    }
    (*values)[name] = *value;
  }
  return true;
}

}  // namespace

Result<uint64_t> ParseDcqcnParam(std::string_view content) {
  std::string_view text = TrimSpace(content);
  if (text.empty()) return MakeError(EINVAL, "empty, expected a decimal integer");
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return MakeError(ERANGE, fmt::format("\"{}\" does not fit 64 bits", text));
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    return MakeError(EINVAL, fmt::format("\"{}\" is not a decimal integer", text));
  }
  return value;
}

Observed<DcqcnParams> ReadDcqcnParams(std::string_view netdev, const HostPaths& paths) {
  const fs::path ecn = fs::path(paths.sysfs) / "class/net" / std::string(netdev) / "ecn";
  if (!IsDirectory(ecn.string())) {
    std::optional<std::string> inbox = InboxCcParamsDir(paths, netdev);
    return inbox ? ReadInboxCcParams(*inbox) : Observed<DcqcnParams>::Absent();
  }
  DcqcnParams params;
  const bool rp = ReadRole(ecn / DcqcnRoleName(DcqcnRole::kReactionPoint), &params.reaction_point,
                           &params.errors);
  const bool np = ReadRole(ecn / DcqcnRoleName(DcqcnRole::kNotificationPoint),
                           &params.notification_point, &params.errors);
  if (!rp && !np) return Observed<DcqcnParams>::Failed(params.errors.front());
  return Observed<DcqcnParams>::Ok(std::move(params));
}

}  // namespace roceqos
