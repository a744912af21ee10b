#include "collectors/dcb_writer.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "collectors/netlink/socket.h"

namespace roceqos {
namespace {

// ---------------------------------------------------------------------------------------------
// SET replies carry the driver's verdict in-band (§1.7).

std::vector<std::byte> SetReply(std::optional<uint8_t> status) {
  netlink::Message msg(RTM_SETDCB, 0);
  dcbmsg header{AF_UNSPEC, DCB_CMD_IEEE_SET, 0};
  msg.PutHeader(&header, sizeof header);
  if (status) msg.PutU8(DCB_ATTR_IEEE, *status);
  auto bytes = msg.bytes();
  const size_t skip = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg));
  return {bytes.begin() + static_cast<long>(skip), bytes.end()};
}

TEST(DcbSetReply, ZeroStatusIsSuccess) {
  EXPECT_TRUE(ParseSetReplyPayload(SetReply(0), "RTM_SETDCB sim0").ok());
}

TEST(DcbSetReply, NegativeErrnoAsInt8IsReported) {
  auto r = ParseSetReplyPayload(SetReply(static_cast<uint8_t>(-EINVAL)), "RTM_SETDCB sim0");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, EINVAL);
  EXPECT_NE(r.error().message.find("Invalid argument"), std::string::npos);
  r = ParseSetReplyPayload(SetReply(static_cast<uint8_t>(-EOPNOTSUPP)), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, EOPNOTSUPP);
}

// The status is the low byte of the negative errno: errnos above 127 (EHWPOISON, ERFKILL,
// EKEYREVOKED...) wrapped to the wrong sign when the byte was read as int8.
TEST(DcbSetReply, ErrnoAbove127IsNotNarrowedThroughInt8) {
  for (int errnum : {1, EINVAL, 127, 128, EKEYREVOKED, ERFKILL, EHWPOISON, 255}) {
    auto r = ParseSetReplyPayload(SetReply(static_cast<uint8_t>(-errnum)), "x");
    ASSERT_FALSE(r.ok()) << errnum;
    EXPECT_EQ(r.error().errnum, errnum);
    EXPECT_NE(r.error().message.find(std::strerror(errnum)), std::string::npos) << errnum;
  }
}

TEST(DcbSetReply, MissingStatusIsAnError) {
  EXPECT_FALSE(ParseSetReplyPayload(SetReply(std::nullopt), "x").ok());
}

}  // namespace
}  // namespace roceqos
