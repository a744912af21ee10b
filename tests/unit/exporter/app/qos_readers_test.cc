#include "exporter/app/qos_readers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// A procfs with only sys/net/ipv4/tcp_ecn, holding a value the host's own procfs does not, so a
// reader that ignored --path.procfs would read a different one.
class FakeProcfs {
 public:
  FakeProcfs() : root_(::testing::TempDir() + "/qos_readers_" + std::to_string(getpid())) {
    fs::create_directories(root_ + "/sys/net/ipv4");
    int host = 0;
    std::ifstream("/proc/sys/net/ipv4/tcp_ecn") >> host;
    value_ = (host + 1) % 3;
    std::ofstream(root_ + "/sys/net/ipv4/tcp_ecn") << value_ << "\n";
  }
  ~FakeProcfs() { fs::remove_all(root_); }
  FakeProcfs(const FakeProcfs&) = delete;
  FakeProcfs& operator=(const FakeProcfs&) = delete;

  const std::string& root() const { return root_; }
  int value() const { return value_; }

 private:
  std::string root_;
  int value_ = 0;
};

TEST(QosReaders, TheRemediationReaderReadsTcpEcnUnderPathProcfs) {
  FakeProcfs procfs;
  Config config;
  config.procfs_path = procfs.root();
  Result<QosIo> io = OpenRemediationIo(config);
  ASSERT_TRUE(io.ok()) << io.error().message;
  ASSERT_NE(io->reader, nullptr);
  ASSERT_NE(io->writer, nullptr);
  const Observed<int> tcp_ecn = io->reader->ReadTcpEcn();
  ASSERT_TRUE(tcp_ecn.ok()) << tcp_ecn.error;
  EXPECT_EQ(tcp_ecn.value, procfs.value());
}

TEST(QosReaders, TheSamplersReaderAndTheWorkersSeeTheSamePaths) {
  Config config;
  config.procfs_path = "/host/proc";
  config.qos_configfs_tos = true;
  Result<std::unique_ptr<KernelQosReader>> sampler = OpenQosReader(config);
  Result<QosIo> worker = OpenRemediationIo(config);
  ASSERT_TRUE(sampler.ok()) << sampler.error().message;
  ASSERT_TRUE(worker.ok()) << worker.error().message;
  const auto* kernel = dynamic_cast<const KernelQosReader*>(worker->reader.get());
  ASSERT_NE(kernel, nullptr);
  const HostPaths& a = (*sampler)->host().paths();
  const HostPaths& b = kernel->host().paths();
  EXPECT_EQ(a.procfs, "/host/proc");
  EXPECT_EQ(b.procfs, a.procfs);
  EXPECT_EQ(b.sysfs, a.sysfs);
  EXPECT_EQ(b.configfs, a.configfs);
  EXPECT_EQ(b.configfs_markers, a.configfs_markers);
}

}  // namespace
}  // namespace roceqos
