#include "collectors/lldp/lldpd_client.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "collectors/lldp/liblldpctl.h"

namespace roceqos::lldp {
namespace {

// lldpd's control message header as liblldpctl reads it from the socket (lldpd src/ctl.h,
// struct hmsg_header: the message type, then its payload's length, in host layout).
struct MessageHeader {
  int32_t type;
  uint64_t length;
};
static_assert(sizeof(MessageHeader) == 16);
constexpr int32_t kGetInterfaces = 3;  // src/ctl.h enum hmsg_type: GET_INTERFACES
constexpr int32_t kGetInterface = 6;   // GET_INTERFACE

// A socket at a fresh path that answers the first request of one connection with `reply`
// (nothing: it closes the connection), the way an lldpd whose messages this liblldpctl does not
// know answers: real bytes, another layout.
class FakeLldpd {
 public:
  explicit FakeLldpd(std::vector<uint8_t> reply) : reply_(std::move(reply)) {
    dir_ = std::filesystem::temp_directory_path() /
           ("roceqos-fake-lldpd-" + std::to_string(getpid()) + "-" + std::to_string(++serial_));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "lldpd.socket").string();
    listener_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.data(), path_.size());
    EXPECT_EQ(bind(listener_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(listen(listener_, 1), 0);
    server_ = std::thread([this] { Serve(); });
  }
  ~FakeLldpd() {
    server_.join();
    close(listener_);
    std::filesystem::remove_all(dir_);
  }
  FakeLldpd(const FakeLldpd&) = delete;
  FakeLldpd& operator=(const FakeLldpd&) = delete;
  const std::string& path() const { return path_; }

 private:
  void Serve() {
    const int conn = accept(listener_, nullptr, nullptr);
    if (conn < 0) return;
    std::vector<uint8_t> request(4096);
    if (recv(conn, request.data(), request.size(), 0) > 0 && !reply_.empty())
      send(conn, reply_.data(), reply_.size(), MSG_NOSIGNAL);
    close(conn);
  }

  static inline int serial_ = 0;
  std::vector<uint8_t> reply_;
  std::filesystem::path dir_;
  std::string path_;
  int listener_ = -1;
  std::thread server_;
};

std::vector<uint8_t> Message(int32_t type, std::vector<uint8_t> payload) {
  const MessageHeader header{.type = type, .length = payload.size()};
  std::vector<uint8_t> bytes(sizeof(header));
  std::memcpy(bytes.data(), &header, sizeof(header));
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

class LldpdClientTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (LoadLldpctl(&why) == nullptr) GTEST_SKIP() << "liblldpctl not loadable: " << why;
  }
  static Result<LldpdView> Ask(const FakeLldpd& lldpd) {
    return QueryLldpd({.socket_path = lldpd.path(), .timeout = std::chrono::seconds(2)}, {"eth0"});
  }
};

// What Debian 12's liblldpctl does with Debian 11's lldpd (docs/lldp.md "lldpd of another
// version"): a structure shorter than its own. EPROTO (lldpd_incompatible), with the structure.
TEST_F(LldpdClientTest, AStructureOfAnotherSizeIsIncompatible) {
  FakeLldpd lldpd(Message(kGetInterfaces, {0xde, 0xad, 0xbe, 0xef}));
  Result<LldpdView> answer = Ask(lldpd);
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().errnum, EPROTO) << answer.error().message;
  EXPECT_NE(answer.error().message.find("list interfaces"), std::string::npos);
  EXPECT_NE(answer.error().message.find("too small"), std::string::npos) << answer.error().message;
  EXPECT_NE(answer.error().message.find("another version"), std::string::npos);
  EXPECT_NE(answer.error().message.find(LoadedLldpctlFile()), std::string::npos);
}

// A message type this library did not ask for (the numbering of another protocol revision).
TEST_F(LldpdClientTest, AnotherMessageTypeIsIncompatible) {
  FakeLldpd lldpd(Message(kGetInterface, {}));
  Result<LldpdView> answer = Ask(lldpd);
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().errnum, EPROTO) << answer.error().message;
  EXPECT_NE(answer.error().message.find("incorrect received message type"), std::string::npos)
      << answer.error().message;
}

// lldpd's own refusal of a request, an empty NONE message (0 in every release): lldpd declined,
// not a version question. For one port it is that port's fault (tests/integration/lldp_partial.sh).
TEST_F(LldpdClientTest, LldpdsEmptyRefusalIsNotIncompatible) {
  FakeLldpd lldpd(Message(/*NONE*/ 0, {}));
  Result<LldpdView> answer = Ask(lldpd);
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().errnum, 0) << answer.error().message;
  EXPECT_NE(answer.error().message.find("list interfaces: lldpd declined the request"),
            std::string::npos)
      << answer.error().message;
}

// A connection lldpd drops without an answer is not a version question: it stays lldpd_error.
TEST_F(LldpdClientTest, AClosedConnectionIsNotIncompatible) {
  FakeLldpd lldpd({});
  Result<LldpdView> answer = Ask(lldpd);
  ASSERT_FALSE(answer);
  EXPECT_NE(answer.error().errnum, EPROTO) << answer.error().message;
}

TEST_F(LldpdClientTest, TheLoadedLibraryIsNamedAndFixed) {
  const std::string file = LoadedLldpctlFile();
  EXPECT_NE(file.find("liblldpctl.so.4"), std::string::npos) << file;
  EXPECT_TRUE(std::filesystem::exists(file)) << file;
  // --lldp.library after the first load would change nothing: refused.
  EXPECT_FALSE(UseLldpctlLibrary("/nonexistent/liblldpctl.so.4"));
  EXPECT_EQ(LoadedLldpctlFile(), file);
}

// Exactly the kernel's dev_valid_name(): every name a healthy lldpd lists passes.
TEST(PlausibleInterfaceNameTest, TheKernelsRule) {
  for (std::string_view name : {"eth0", "ens1f0np0", "bond0.100", "a", "123456789012345",
                                "veth-x_y@z", "\x01odd", "caf\xc3\xa9"})
    EXPECT_TRUE(PlausibleInterfaceName(name)) << name;
  for (std::string_view name :
       {"", ".", "..", "1234567890123456", "eth0:1", "a/b", "a b", "tab\there", "new\nline"})
    EXPECT_FALSE(PlausibleInterfaceName(name)) << name;
}

}  // namespace
}  // namespace roceqos::lldp
