#include "exporter/qos/policy_loader.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>

namespace roceqos {
namespace {

// The same file, unchanged: inode, size and modification time as first seen.
bool SameFile(const struct stat& before, const struct stat& after) {
  return after.st_ino == before.st_ino && after.st_size == before.st_size &&
         after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
         after.st_mtim.tv_nsec == before.st_mtim.tv_nsec;
}

}  // namespace

Result<std::shared_ptr<const PolicySet>> LoadPolicy(const std::string& config_path,
                                                    const std::function<void()>& after_read) {
  if (config_path.empty()) return std::make_shared<const PolicySet>(DefaultPolicy());
  // A file being rewritten in place (an editor, `cat > policy.yaml`) can be read half-written;
  // a prefix of a valid policy may itself be valid. Refuse a file that changed while it was
  // read: the last good policy stays, and the writer's own reload (or the next) gets it whole.
  struct stat before {
  }, after{};
  const bool stat_before = ::stat(config_path.c_str(), &before) == 0;
  auto set = LoadPolicyFile(config_path);
  if (!set) return set.error();
  if (after_read) after_read();
  if (stat_before && (::stat(config_path.c_str(), &after) != 0 || !SameFile(before, after)))
    return MakeError(EAGAIN, fmt::format("{}: changed while it was being read (write the new "
                                         "policy to a temporary file and rename it into place)",
                                         config_path));
  return std::make_shared<const PolicySet>(std::move(*set));
}

}  // namespace roceqos
