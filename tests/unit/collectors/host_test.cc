#include "collectors/host.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "collectors/dcqcn_params.h"
#include "collectors/host_writer.h"

namespace roceqos {
namespace {

namespace fs = std::filesystem;

// A throwaway sysfs/procfs/configfs tree.
class HostFixture : public testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / ("roceqos_host_" + std::to_string(::getpid()) + "_" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    paths_.sysfs = (root_ / "sys").string();
    paths_.procfs = (root_ / "proc").string();
    paths_.configfs = (root_ / "config").string();
    paths_.configfs_markers = (root_ / "run/markers").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& relative, const std::string& content) {
    fs::path p = root_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }

  // MOFED ecn tree with NP/RP enabled on the given priorities.
  void WriteEcn(const std::string& netdev, uint8_t np_mask, uint8_t rp_mask) {
    for (int p = 0; p < 8; ++p) {
      Write("sys/class/net/" + netdev + "/ecn/roce_np/enable/" + std::to_string(p),
            (np_mask >> p) & 1 ? "1\n" : "0\n");
      Write("sys/class/net/" + netdev + "/ecn/roce_rp/enable/" + std::to_string(p),
            (rp_mask >> p) & 1 ? "1\n" : "0\n");
    }
    Write("sys/class/net/" + netdev + "/ecn/roce_np/cnp_dscp", "48\n");
    Write("sys/class/net/" + netdev + "/ecn/roce_np/cnp_802p_prio", "6\n");
  }

  fs::path root_;
  HostPaths paths_;
};

TEST(HostParse, EnableFlagAcceptsOnlyZeroAndOne) {
  EXPECT_EQ(ParseEnableFlag("1\n").value(), true);
  EXPECT_EQ(ParseEnableFlag("0").value(), false);
  for (const char* bad : {"2\n", "abc", "", "\n", "1 1", "-1", "01x"}) {
    auto r = ParseEnableFlag(bad);
    ASSERT_FALSE(r.ok()) << "\"" << bad << "\"";
    EXPECT_FALSE(r.error().message.empty());
  }
  EXPECT_NE(ParseEnableFlag("2\n").error().message.find("2 is outside 0..1"), std::string::npos);
  EXPECT_NE(ParseEnableFlag("abc").error().message.find("\"abc\" is not an integer"),
            std::string::npos);
  EXPECT_NE(ParseEnableFlag("").error().message.find("empty"), std::string::npos);
}

TEST(HostParse, MofedTrafficClassFormats) {
  // Real capture 21: empty before `echo 106 >`, "Global tclass=106" after.
  EXPECT_EQ(ParseMofedTrafficClass("").value(), std::nullopt);
  EXPECT_EQ(ParseMofedTrafficClass("Global tclass=106\n").value(), std::optional<uint8_t>(106));
  // Rule lines follow the global line (traffic_class_show); only the global value counts.
  EXPECT_EQ(ParseMofedTrafficClass("Global tclass=160\ndst_ip=1.2.3.4,tclass=96\n").value(),
            std::optional<uint8_t>(160));
  EXPECT_EQ(ParseMofedTrafficClass("dst_ip=1.2.3.4,tclass=96\n").value(), std::nullopt);
  EXPECT_FALSE(ParseMofedTrafficClass("Global tclass=abc\n").ok());
  EXPECT_FALSE(ParseMofedTrafficClass("Global tclass=300\n").ok());
}

TEST_F(HostFixture, DcqcnEnablesPerPriorityAndCnpSettings) {
  WriteEcn("ens1f0np0", 0x08, 0x28);
  DcqcnState s = HostReader(paths_).ReadDcqcn("ens1f0np0");
  for (int p = 0; p < 8; ++p) {
    ASSERT_TRUE(s.np_enabled[p].ok()) << s.np_enabled[p].error;
    EXPECT_EQ(s.np_enabled[p].value, p == 3) << p;
    EXPECT_EQ(s.rp_enabled[p].value, p == 3 || p == 5) << p;
  }
  EXPECT_EQ(s.cnp_dscp, Observed<uint8_t>::Ok(48));
  EXPECT_EQ(s.cnp_802p_prio, Observed<uint8_t>::Ok(6));
}

TEST_F(HostFixture, NoEcnTreeMeansAbsentNotFailed) {
  fs::create_directories(root_ / "sys/class/net/veth0");
  DcqcnState s = HostReader(paths_).ReadDcqcn("veth0");
  for (int p = 0; p < 8; ++p) {
    EXPECT_TRUE(s.np_enabled[p].absent());
    EXPECT_TRUE(s.rp_enabled[p].absent());
  }
  EXPECT_TRUE(s.cnp_dscp.absent());
}

TEST_F(HostFixture, BadEnableContentFailsThatPriorityWithPathAndReason) {
  WriteEcn("sim0", 0x08, 0x08);
  Write("sys/class/net/sim0/ecn/roce_np/enable/3", "2\n");
  Write("sys/class/net/sim0/ecn/roce_rp/enable/3", "abc");
  Write("sys/class/net/sim0/ecn/roce_rp/enable/4", "");
  DcqcnState s = HostReader(paths_).ReadDcqcn("sim0");
  ASSERT_TRUE(s.np_enabled[3].failed());
  EXPECT_NE(s.np_enabled[3].error.find("roce_np/enable/3"), std::string::npos)
      << s.np_enabled[3].error;
  EXPECT_NE(s.np_enabled[3].error.find("outside 0..1"), std::string::npos);
  ASSERT_TRUE(s.rp_enabled[3].failed());
  EXPECT_NE(s.rp_enabled[3].error.find("not an integer"), std::string::npos);
  ASSERT_TRUE(s.rp_enabled[4].failed());
  EXPECT_NE(s.rp_enabled[4].error.find("empty"), std::string::npos);
  EXPECT_TRUE(s.np_enabled[2].ok());  // one bad file does not spoil the others
}

TEST_F(HostFixture, UnreadableFileIsFailedNotAbsent) {
  if (::geteuid() == 0) {
    // root reads mode-000 files; a directory in place of the file gives EISDIR instead.
    fs::create_directories(root_ / "proc/sys/net/ipv4/tcp_ecn");
  } else {
    Write("proc/sys/net/ipv4/tcp_ecn", "1\n");
    fs::permissions(root_ / "proc/sys/net/ipv4/tcp_ecn", fs::perms::none);
  }
  Observed<int> v = HostReader(paths_).ReadTcpEcn();
  ASSERT_TRUE(v.failed());
  EXPECT_NE(v.error.find("tcp_ecn"), std::string::npos) << v.error;
}

TEST_F(HostFixture, TcpEcnValuesAndRange) {
  HostReader reader(paths_);
  EXPECT_TRUE(reader.ReadTcpEcn().absent());
  Write("proc/sys/net/ipv4/tcp_ecn", "2\n");
  EXPECT_EQ(reader.ReadTcpEcn(), Observed<int>::Ok(2));
  Write("proc/sys/net/ipv4/tcp_ecn", "3\n");
  EXPECT_TRUE(reader.ReadTcpEcn().failed());
  ASSERT_TRUE(HostWriter(paths_).WriteTcpEcn(1).ok());
  EXPECT_EQ(reader.ReadTcpEcn(), Observed<int>::Ok(1));
}

TEST_F(HostFixture, MofedTrafficClassPreferredOverConfigfs) {
  Write("sys/class/infiniband/mlx5_2/tc/1/traffic_class", "Global tclass=106\n");
  Write("config/rdma_cm/mlx5_2/ports/1/default_roce_tos", "0\n");
  RoceTosState s = HostReader(paths_).ReadRoceTos("mlx5_2", 1);
  EXPECT_EQ(s.mofed_tclass.value, std::optional<uint8_t>(106));
  EXPECT_EQ(s.configfs_tos, Observed<uint8_t>::Ok(0));
  EXPECT_EQ(s.Effective(), Observed<uint8_t>::Ok(106));
}

TEST_F(HostFixture, EmptyTrafficClassFallsBackToConfigfsThenToZero) {
  Write("sys/class/infiniband/mlx5_2/tc/1/traffic_class", "");
  Write("config/rdma_cm/mlx5_2/ports/1/default_roce_tos", "106\n");
  EXPECT_EQ(HostReader(paths_).ReadRoceTos("mlx5_2", 1).Effective(), Observed<uint8_t>::Ok(106));
  fs::remove_all(root_ / "config");
  // MOFED file present but unset, no rdma_cm: new QPs get ToS 0.
  EXPECT_EQ(HostReader(paths_).ReadRoceTos("mlx5_2", 1).Effective(), Observed<uint8_t>::Ok(0));
}

TEST_F(HostFixture, NoTosSourceIsAbsent) {
  EXPECT_TRUE(HostReader(paths_).ReadRoceTos("mlx5_0", 1).Effective().absent());
}

TEST_F(HostFixture, ConfigfsGroupIsNotCreatedWithoutPermission) {
  fs::create_directories(root_ / "config/rdma_cm");
  RoceTosState s = HostReader(paths_, /*configfs_mkdir=*/false).ReadRoceTos("mlx5_0", 1);
  EXPECT_TRUE(s.configfs_tos.absent());
  EXPECT_FALSE(fs::exists(root_ / "config/rdma_cm/mlx5_0"));
}

TEST_F(HostFixture, ConfigfsGroupWeCreateIsRemovedAgain) {
  fs::create_directories(root_ / "config/rdma_cm");
  // Watch the directory: a plain directory does not grow ports/ like configfs does, so the value
  // reads absent; what this test checks is the side effect, a mkdir followed by its rmdir.
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_GE(::inotify_add_watch(fd, (root_ / "config/rdma_cm").c_str(), IN_CREATE | IN_DELETE), 0);
  RoceTosState s = HostReader(paths_, /*configfs_mkdir=*/true).ReadRoceTos("mlx5_0", 1);
  EXPECT_TRUE(s.configfs_tos.absent());
  EXPECT_FALSE(fs::exists(root_ / "config/rdma_cm/mlx5_0"));

  alignas(inotify_event) char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  ASSERT_GT(n, 0);
  std::vector<std::string> events;
  for (char* p = buf; p < buf + n;) {
    auto* ev = reinterpret_cast<inotify_event*>(p);
    events.push_back(std::string(ev->mask & IN_CREATE ? "create " : "delete ") + ev->name);
    p += sizeof(inotify_event) + ev->len;
  }
  EXPECT_EQ(events, (std::vector<std::string>{"create mlx5_0", "delete mlx5_0"}));
}

TEST_F(HostFixture, ConfigfsGroupIsMarkedWhileItExistsAndTheMarkerGoesWithIt) {
  fs::create_directories(root_ / "config/rdma_cm");
  fs::create_directories(root_ / "run/markers");
  // A kill between the mkdir and the rmdir: what is on disk at the moment of the mkdir.
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_GE(::inotify_add_watch(fd, (root_ / "run/markers").c_str(), IN_CREATE | IN_DELETE), 0);
  ASSERT_GE(::inotify_add_watch(fd, (root_ / "config/rdma_cm").c_str(), IN_CREATE | IN_DELETE), 0);
  HostReader(paths_, /*configfs_mkdir=*/true).ReadRoceTos("mlx5_0", 1);
  alignas(inotify_event) char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  ASSERT_GT(n, 0);
  std::vector<std::string> events;
  for (char* p = buf; p < buf + n;) {
    auto* ev = reinterpret_cast<inotify_event*>(p);
    events.push_back(std::string(ev->mask & IN_CREATE ? "create " : "delete ") + ev->name);
    p += sizeof(inotify_event) + ev->len;
  }
  // Marker before the group, group gone before the marker: no instant with an unmarked group.
  EXPECT_EQ(events, (std::vector<std::string>{"create mlx5_0", "create mlx5_0", "delete mlx5_0",
                                              "delete mlx5_0"}));
  EXPECT_TRUE(fs::is_empty(root_ / "run/markers"));
}

TEST_F(HostFixture, OrphanGroupOfAKilledProcessIsRemovedAtStartForeignOnesAreNot) {
  fs::create_directories(root_ / "config/rdma_cm/mlx5_0");  // ours: killed before its rmdir
  fs::create_directories(root_ / "config/rdma_cm/mlx5_1");  // an administrator's
  Write("run/markers/mlx5_0", "");
  Write("run/markers/mlx5_2", "");  // killed after the marker, before the mkdir
  std::vector<std::string> removed = HostReader(paths_, true).RemoveOrphanConfigfsGroups();
  EXPECT_EQ(removed, std::vector<std::string>{"mlx5_0"});
  EXPECT_FALSE(fs::exists(root_ / "config/rdma_cm/mlx5_0"));
  EXPECT_TRUE(fs::exists(root_ / "config/rdma_cm/mlx5_1"));
  EXPECT_TRUE(fs::is_empty(root_ / "run/markers"));
}

TEST_F(HostFixture, NoMarkerNoMkdir) {
  fs::create_directories(root_ / "config/rdma_cm");
  Write("run", "a file where the marker directory should be");
  RoceTosState s = HostReader(paths_, /*configfs_mkdir=*/true).ReadRoceTos("mlx5_0", 1);
  ASSERT_TRUE(s.configfs_tos.failed());
  EXPECT_NE(s.configfs_tos.error.find("marker"), std::string::npos) << s.configfs_tos.error;
  EXPECT_FALSE(fs::exists(root_ / "config/rdma_cm/mlx5_0"));
}

// The syscall a thread of this process is blocked in, from /proc/self/task/<tid>/syscall (its
// first field; "running" while it runs). -1 when unknown.
long BlockedSyscall(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  std::string first;
  in >> first;
  if (first.empty() || first == "running") return -1;
  char* end = nullptr;
  const long nr = std::strtol(first.c_str(), &end, 10);
  return end != nullptr && *end == '\0' ? nr : -1;
}

// Another reader (the remediation worker's, or a second exporter) is inside its configfs section:
// it has written its marker and created the group, and has not read or removed it yet. A second
// reader must wait for it, not read a group about to vanish or take its marker away on EEXIST.
TEST_F(HostFixture, AReaderWaitsWhileAnotherIsInsideItsConfigfsSection) {
  fs::create_directories(root_ / "config/rdma_cm");
  fs::create_directories(root_ / "run/markers");
  const int held = ::open((root_ / "run/markers").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);  // the other reader's section
  Write("run/markers/mlx5_0", "");
  fs::create_directories(root_ / "config/rdma_cm/mlx5_0");

  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  RoceTosState second;
  std::thread reader([&] {
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    second = HostReader(paths_, /*configfs_mkdir=*/true).ReadRoceTos("mlx5_0", 1);
    done = true;
  });
  // Until the second reader is seen blocked in flock(2) or has finished without waiting; a bounded
  // wait only for a reader that never got the CPU.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool waiting = false;
  while (!done && !(waiting = tid != 0 && BlockedSyscall(tid) == SYS_flock) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_FALSE(done) << "the second reader went into the group while another reader held it";
  EXPECT_TRUE(waiting || done);
  EXPECT_TRUE(fs::exists(root_ / "run/markers/mlx5_0")) << "the other reader's marker was taken";

  // The other reader finishes: removes its group, then its marker, and leaves the section.
  fs::remove(root_ / "config/rdma_cm/mlx5_0");
  fs::remove(root_ / "run/markers/mlx5_0");
  ::close(held);
  reader.join();
  // The second reader did its own section: created, read (a plain directory has no ports/),
  // removed, and left no marker behind.
  EXPECT_TRUE(second.configfs_tos.absent()) << second.configfs_tos.error;
  EXPECT_FALSE(fs::exists(root_ / "config/rdma_cm/mlx5_0"));
  EXPECT_TRUE(fs::is_empty(root_ / "run/markers"));
}

TEST_F(HostFixture, AnExistingGroupIsReadEvenWithoutAMarkerDirectory) {
  Write("config/rdma_cm/mlx5_0/ports/1/default_roce_tos", "106\n");
  Write("run", "a file where the marker directory should be");
  RoceTosState s = HostReader(paths_, /*configfs_mkdir=*/true).ReadRoceTos("mlx5_0", 1);
  EXPECT_EQ(s.configfs_tos, Observed<uint8_t>::Ok(106));
}

TEST_F(HostFixture, ConfigfsGroupThatExistedIsLeftInPlace) {
  Write("config/rdma_cm/mlx5_0/ports/1/default_roce_tos", "106\n");
  RoceTosState s = HostReader(paths_, /*configfs_mkdir=*/true).ReadRoceTos("mlx5_0", 1);
  EXPECT_EQ(s.configfs_tos, Observed<uint8_t>::Ok(106));
  EXPECT_TRUE(fs::exists(root_ / "config/rdma_cm/mlx5_0/ports/1/default_roce_tos"));
}

TEST_F(HostFixture, DcqcnWriteIsReadBack) {
  WriteEcn("sim0", 0x00, 0x00);
  HostReader reader(paths_);
  HostWriter writer(paths_);
  ASSERT_TRUE(writer.WriteDcqcnEnable("sim0", /*np=*/true, 3, true).ok());
  ASSERT_TRUE(writer.WriteDcqcnEnable("sim0", /*np=*/false, 3, true).ok());
  DcqcnState s = reader.ReadDcqcn("sim0");
  EXPECT_TRUE(s.np_enabled[3].value);
  EXPECT_TRUE(s.rp_enabled[3].value);
  EXPECT_FALSE(s.np_enabled[2].value);
  auto missing = writer.WriteDcqcnEnable("nosuch", true, 3, true);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nosuch/ecn/roce_np/enable/3"), std::string::npos);
}

TEST_F(HostFixture, DcqcnParamWriteIsReadBackAndStaysInsideEcn) {
  WriteEcn("sim0", 0x08, 0x08);
  Write("sys/class/net/sim0/ecn/roce_rp/rpg_ai_rate", "5\n");
  HostReader reader(paths_);
  HostWriter writer(paths_);
  ASSERT_TRUE(writer.WriteDcqcnParam("sim0", /*np=*/true, "cnp_dscp", 26).ok());
  ASSERT_TRUE(writer.WriteDcqcnParam("sim0", /*np=*/false, "rpg_ai_rate", 10).ok());
  EXPECT_EQ(reader.ReadDcqcn("sim0").cnp_dscp.value, 26);
  auto params = ReadDcqcnParams("sim0", paths_);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params.value.reaction_point.at("rpg_ai_rate"), 10u);
  for (const char* bad : {"", "..", ".", "../../../../etc/x", "enable/3"}) {
    auto r = writer.WriteDcqcnParam("sim0", false, bad, 1);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().errnum, EINVAL) << bad;
  }
}

// The real ioctl on the build machine: loopback has no tunable ops (absent); an unknown device
// is a failure that names it.
TEST(PfcStormTimeout, LoopbackIsAbsentUnknownDeviceFails) {
  EXPECT_TRUE(ReadPfcStormTimeout("lo").absent());
  Observed<uint16_t> missing = ReadPfcStormTimeout("nosuchdev0");
  ASSERT_TRUE(missing.failed());
  EXPECT_NE(missing.error.find("nosuchdev0"), std::string::npos);
  EXPECT_TRUE(ReadPfcStormTimeout("a-name-longer-than-ifnamsiz").failed());
}

}  // namespace
}  // namespace roceqos
