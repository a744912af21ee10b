#pragma once

// tests/fixtures/netlink/rtm_getaddr_dump_veth.bin (recorded by record.py getaddr), parsed by
// the same reply reader and parser the AddressCollector runs:
//   ifindex 2 (rq1): 198.51.100.1/24, fe80::6088:5ff:fe3a:1ed9 (tentative), fe80::1 (nodad)
//   ifindex 3 (rq0): 192.0.2.1/24, 2001:db8:1::1 (tentative), 2001:db8::1 (nodad),
//                    fe80::c85a:f6ff:fe86:9e25 (tentative)

#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "collectors/addresses.h"
#include "collectors/netlink/socket.h"

namespace roceqos::testing {

inline constexpr int32_t kRecordedRq1 = 2;
inline constexpr int32_t kRecordedRq0 = 3;

inline std::vector<std::byte> RecordedGetAddrDump() {
  std::ifstream in(std::string(ROCEQOS_FIXTURES_DIR) + "/netlink/rtm_getaddr_dump_veth.bin",
                   std::ios::binary);
  EXPECT_TRUE(in);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

/// Every address of the recording, in its order; fails the test on a parse error.
inline std::vector<IfAddress> RecordedAddresses() {
  const std::vector<std::byte> dump = RecordedGetAddrDump();
  nlmsghdr first{};
  if (dump.size() >= sizeof(first)) std::memcpy(&first, dump.data(), sizeof(first));
  netlink::ReplyReader reader(first.nlmsg_seq, first.nlmsg_pid, NLM_F_REQUEST | NLM_F_DUMP,
                              "recorded RTM_GETADDR dump");
  std::vector<IfAddress> addresses;
  Result<bool> done = reader.Feed(dump, [&](const netlink::NlMessage& msg) -> Result<void> {
    EXPECT_EQ(msg.header.nlmsg_type, RTM_NEWADDR);
    Result<std::optional<IfAddress>> address = ParseAddrReply(msg.body);
    if (!address) return address.error();
    if (*address) addresses.push_back(**address);
    return {};
  });
  EXPECT_TRUE(done && *done) << (done ? "" : done.error().message);
  return addresses;
}

}  // namespace roceqos::testing
