#include "collectors/lldp/control_socket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

namespace roceqos::lldp {
namespace {

// A Unix stream socket bound at `path`, listening when `listen` is set: real kernel state that
// /proc/net/unix lists for this network namespace.
class BoundSocket {
 public:
  BoundSocket(const std::string& path, bool listen) : fd_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << path;
    if (listen) {
      EXPECT_EQ(::listen(fd_, 1), 0);
    }
  }
  ~BoundSocket() { ::close(fd_); }
  BoundSocket(const BoundSocket&) = delete;
  BoundSocket& operator=(const BoundSocket&) = delete;

 private:
  int fd_;
};

class ControlSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/roceqos-ctlsock-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST(UnixSocketLineTest, ParsesFlagsAndPath) {
  // As net/unix/af_unix.c unix_seq_show prints them (Debian 12, 6.1).
  EXPECT_FALSE(ParseUnixSocketLine("Num       RefCount Protocol Flags    Type St Inode Path"));
  auto listener = ParseUnixSocketLine(
      "000000009ef3e1f5: 00000002 00000000 00010000 0001 01 23785 /run/lldpd.socket");
  ASSERT_TRUE(listener);
  EXPECT_TRUE(listener->listening);
  EXPECT_EQ(listener->path, "/run/lldpd.socket");
  auto connected =
      ParseUnixSocketLine("0000000043f305aa: 00000003 00000000 00000000 0001 03  1126");
  ASSERT_TRUE(connected);
  EXPECT_FALSE(connected->listening);
  EXPECT_EQ(connected->path, "");
  auto spaced = ParseUnixSocketLine(
      "0000000043f305aa: 00000002 00000000 00010000 0001 01 77 /run/a b.sock\n");
  ASSERT_TRUE(spaced);
  EXPECT_EQ(spaced->path, "/run/a b.sock");
  EXPECT_FALSE(ParseUnixSocketLine("0000000043f305aa: 00000002 00000000 0001zz00 0001 01 77 /x"));
  EXPECT_FALSE(ParseUnixSocketLine("0000000043f305aa: 00000002"));
  EXPECT_FALSE(ParseUnixSocketLine(""));
}

TEST_F(ControlSocketTest, ListenerBoundAtSeesOnlyAListeningSocketAtThatPath) {
  const std::string path = dir_ + "/lldpd.socket";
  EXPECT_FALSE(ListenerBoundAt(path, "/proc/net/unix"));
  {
    BoundSocket bound(path, /*listen=*/false);
    EXPECT_FALSE(ListenerBoundAt(path, "/proc/net/unix")) << "bound, not listening";
  }
  std::filesystem::remove(path);
  {
    BoundSocket listening(path, /*listen=*/true);
    EXPECT_TRUE(ListenerBoundAt(path, "/proc/net/unix"));
    EXPECT_FALSE(ListenerBoundAt(path + "x", "/proc/net/unix"));
  }
  EXPECT_FALSE(ListenerBoundAt(path, "/proc/net/unix")) << "closed";
  EXPECT_FALSE(ListenerBoundAt(path, dir_ + "/no-such-listing"));
}

TEST_F(ControlSocketTest, UnlinkedOnlyForAnInodeWithoutAName) {
  const std::string path = dir_ + "/lldpd.socket";
  EXPECT_FALSE(Unlinked(path)) << "missing";
  BoundSocket old_socket(path, /*listen=*/true);
  EXPECT_FALSE(Unlinked(path));
  // A handle on the socket inode, as a bind mount of the file is: after lldpd's unlink and new
  // bind, the path names the new socket, the handle still the old one.
  const int handle = ::open(path.c_str(), O_PATH);
  ASSERT_GE(handle, 0);
  const std::string through_handle = "/proc/self/fd/" + std::to_string(handle);
  EXPECT_FALSE(Unlinked(through_handle));
  std::filesystem::remove(path);
  BoundSocket new_socket(path, /*listen=*/true);
  EXPECT_TRUE(Unlinked(through_handle));
  EXPECT_FALSE(Unlinked(path));
  ::close(handle);
}

}  // namespace
}  // namespace roceqos::lldp
