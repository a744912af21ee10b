#include "exporter/qos/policy_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

namespace roceqos {
namespace {

// A policy rewritten while it is read (an editor saving in place, `cat > policy.yaml`) is refused
// whole: what was read may be a valid prefix of the new file. Both ways a file changes under the
// reader: rewritten in place (size differs) and replaced by a rename (same size, new inode).
TEST(PolicyLoader, PolicyFileThatChangesWhileItIsReadIsRefused) {
  const std::string path =
      ::testing::TempDir() + "/qos_engine_torn_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "defaults: {pfc: [3]}\n";

  auto in_place = LoadPolicy(path, [&] { std::ofstream(path) << "defaults: {pfc: [3, 4]}\n"; });
  ASSERT_FALSE(in_place.ok());
  EXPECT_EQ(in_place.error().errnum, EAGAIN);
  EXPECT_NE(in_place.error().message.find("changed while it was being read"), std::string::npos)
      << in_place.error().message;

  auto renamed = LoadPolicy(path, [&] {
    std::ofstream(path + ".new") << "defaults: {pfc: [5]}\n";
    std::filesystem::rename(path + ".new", path);
  });
  ASSERT_FALSE(renamed.ok());
  EXPECT_EQ(renamed.error().errnum, EAGAIN);

  auto settled = LoadPolicy(path);  // the next reload takes the file whole
  ASSERT_TRUE(settled.ok()) << settled.error().message;
  EXPECT_EQ((*settled)->defaults.pfc, 0x20);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace roceqos
