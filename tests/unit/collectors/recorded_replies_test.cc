// Real kernel replies recorded by tests/fixtures/netlink/record.py, fed through the same code the
// sockets run.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "collectors/discovery.h"
#include "collectors/netlink/genl.h"
#include "collectors/netlink/socket.h"

namespace roceqos {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

std::vector<std::byte> ReadFixture(const std::string& name) {
  std::ifstream in(std::string(ROCEQOS_FIXTURES_DIR) + "/netlink/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

nlmsghdr FirstHeader(const std::vector<std::byte>& bytes) {
  nlmsghdr header{};
  if (bytes.size() >= sizeof(header)) std::memcpy(&header, bytes.data(), sizeof(header));
  return header;
}

TEST(RecordedReplies, GetLinkDumpOfVethAndBridge) {
  std::vector<std::byte> dump = ReadFixture("rtm_getlink_dump_veth_bridge.bin");
  const nlmsghdr first = FirstHeader(dump);
  netlink::ReplyReader reader(first.nlmsg_seq, first.nlmsg_pid, NLM_F_REQUEST | NLM_F_DUMP,
                              "recorded RTM_GETLINK dump");
  std::vector<Device> devices;
  Result<bool> done = reader.Feed(dump, [&](const netlink::NlMessage& msg) -> Result<void> {
    EXPECT_EQ(msg.header.nlmsg_type, RTM_NEWLINK);
    Result<Device> device = ParseLinkReply(msg.body);
    if (!device) return device.error();
    devices.push_back(*device);
    return {};
  });
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_TRUE(*done);
  EXPECT_TRUE(reader.complete());

  Inventory inventory = AssembleInventory(devices, {}, false);
  ASSERT_EQ(inventory.devices.size(), 4u);
  const Device& lo = inventory.devices[0];
  EXPECT_EQ(lo.name, "lo");
  EXPECT_EQ(lo.ifindex, 1);
  EXPECT_EQ(lo.mtu, 65536u);
  std::vector<std::string> names;
  for (const Device& device : inventory.devices) {
    names.push_back(device.name);
    if (device.name == "rq0") {
      EXPECT_EQ(device.kind, "veth");
      EXPECT_EQ(device.master, "rqbr");
      EXPECT_EQ(device.slave_kind, "bridge");
      EXPECT_EQ(device.oper_state, OperState::kUp);
      EXPECT_TRUE(device.carrier);
    }
    if (device.name == "rqbr") {
      EXPECT_EQ(device.kind, "bridge");
      EXPECT_EQ(device.master, "");
    }
  }
  EXPECT_THAT(names, Contains("rq1"));
  EXPECT_THAT(names, Contains("rqbr"));
}

TEST(RecordedReplies, StrictGetLinkErrorCarriesTheKernelsExtack) {
  std::vector<std::byte> reply = ReadFixture("nlmsgerr_einval_extack_getlink_strict.bin");
  const nlmsghdr first = FirstHeader(reply);
  EXPECT_EQ(first.nlmsg_type, NLMSG_ERROR);
  netlink::ReplyReader reader(first.nlmsg_seq, first.nlmsg_pid, NLM_F_REQUEST | NLM_F_ACK,
                              "RTM_GETLINK 1");
  Result<bool> done = reader.Feed(reply, [](const netlink::NlMessage&) { return Result<void>(); });
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EINVAL);
  EXPECT_EQ(done.error().message,
            "RTM_GETLINK 1: Invalid argument (Invalid values in header for get link request)");
  EXPECT_TRUE(reader.complete());
}

TEST(RecordedReplies, GenlFamilyReplyThenAck) {
  std::vector<std::byte> reply = ReadFixture("genl_ctrl_newfamily_nlctrl.bin");
  const nlmsghdr first = FirstHeader(reply);
  netlink::ReplyReader reader(first.nlmsg_seq, first.nlmsg_pid, NLM_F_REQUEST | NLM_F_ACK,
                              "CTRL_CMD_GETFAMILY nlctrl");
  std::vector<netlink::GenlFamily> families;
  Result<bool> done = reader.Feed(reply, [&](const netlink::NlMessage& msg) -> Result<void> {
    Result<netlink::GenlFamily> family = netlink::ParseGenlFamilyReply(msg);
    if (!family) return family.error();
    families.push_back(*family);
    return {};
  });
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_TRUE(*done);
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].id, GENL_ID_CTRL);
  ASSERT_FALSE(families[0].multicast_groups.empty());
  EXPECT_EQ(families[0].multicast_groups[0].name, "notify");
}

}  // namespace
}  // namespace roceqos
