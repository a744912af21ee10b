#include "collectors/addresses.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "collectors/netlink/socket.h"
#include "tests/unit/support/recorded_addresses.h"

namespace roceqos {
namespace {

using testing::kRecordedRq0;
using testing::kRecordedRq1;

std::vector<std::string> TextsOn(const std::vector<IfAddress>& addresses, int32_t ifindex) {
  std::vector<std::string> texts;
  for (const IfAddress& a : addresses)
    if (a.ifindex == ifindex) texts.push_back(AddressText(a));
  return texts;
}

TEST(RecordedGetAddr, ParsesBothFamiliesOfEveryNetdevWithTheirFlags) {
  const std::vector<IfAddress> addresses = testing::RecordedAddresses();
  ASSERT_EQ(addresses.size(), 7u);
  EXPECT_EQ(TextsOn(addresses, kRecordedRq0),
            (std::vector<std::string>{"192.0.2.1", "2001:db8:1::1", "2001:db8::1",
                                      "fe80::c85a:f6ff:fe86:9e25"}));
  EXPECT_EQ(TextsOn(addresses, kRecordedRq1),
            (std::vector<std::string>{"198.51.100.1", "fe80::6088:5ff:fe3a:1ed9", "fe80::1"}));
  for (const IfAddress& a : addresses) {
    const std::string text = AddressText(a);
    EXPECT_EQ(a.family,
              text.find(':') == std::string::npos ? AddressFamily::kIpv4 : AddressFamily::kIpv6);
    // record.py added the 2001:db8:1::1 and the kernel's link-locals with DAD, on links whose
    // DAD cannot finish; everything else with nodad or as IPv4 (no DAD).
    const bool dad_pending =
        text == "2001:db8:1::1" || (text.rfind("fe80::", 0) == 0 && text != "fe80::1");
    EXPECT_EQ(AddressSettled(a), !dad_pending) << text;
    EXPECT_NE(a.flags & IFA_F_PERMANENT, 0u) << text;
  }
}

TEST(AddressGid, IsTheIpv4MappedAddressOrTheIpv6AddressAsSysfsPrintsIt) {
  const std::vector<IfAddress> addresses = testing::RecordedAddresses();
  ASSERT_GE(addresses.size(), 2u);
  EXPECT_EQ(GidTextOf(addresses[1]), "0000:0000:0000:0000:0000:ffff:c000:0201");  // 192.0.2.1
  IfAddress v6{.family = AddressFamily::kIpv6};
  ASSERT_EQ(inet_pton(AF_INET6, "fe80::1", v6.bytes.data()), 1);
  EXPECT_EQ(GidTextOf(v6), "fe80:0000:0000:0000:0000:0000:0000:0001");
}

netlink::Message AddrMessage(uint8_t family,
                             std::initializer_list<std::pair<uint16_t, size_t>> attrs) {
  netlink::Message msg(RTM_NEWADDR, 0);
  ifaddrmsg header{};
  header.ifa_family = family;
  header.ifa_index = 7;
  msg.PutHeader(&header, sizeof(header));
  const std::array<uint8_t, 16> bytes{192, 0, 2, 9};
  for (const auto& [type, len] : attrs) msg.Put(type, bytes.data(), len);
  return msg;
}

Result<std::optional<IfAddress>> Parse(netlink::Message& msg) {
  return ParseAddrReply(msg.bytes().subspan(sizeof(nlmsghdr)));
}

TEST(ParseAddrReply, PrefersIfaLocalAndRefusesAnAddressOfTheWrongSize) {
  netlink::Message both = AddrMessage(AF_INET, {{IFA_ADDRESS, 4}, {IFA_LOCAL, 4}});
  auto parsed = Parse(both);
  ASSERT_TRUE(parsed && *parsed);
  EXPECT_EQ(AddressText(**parsed), "192.0.2.9");
  EXPECT_EQ((*parsed)->ifindex, 7);

  netlink::Message v6_of_four = AddrMessage(AF_INET6, {{IFA_ADDRESS, 4}});
  auto bad = Parse(v6_of_four);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("4-byte address"), std::string::npos) << bad.error().message;

  netlink::Message five = AddrMessage(AF_INET, {{IFA_LOCAL, 5}});
  EXPECT_FALSE(Parse(five));
}

TEST(ParseAddrReply, OtherFamiliesAndAddresslessMessagesAreSkippedAShortHeaderFails) {
  netlink::Message other = AddrMessage(AF_PACKET, {{IFA_ADDRESS, 4}});
  auto skipped = Parse(other);
  ASSERT_TRUE(skipped);
  EXPECT_FALSE(*skipped);
  netlink::Message none = AddrMessage(AF_INET, {});
  auto empty = Parse(none);
  ASSERT_TRUE(empty);
  EXPECT_FALSE(*empty);
  const std::array<std::byte, 3> three{};
  EXPECT_FALSE(ParseAddrReply(three));
}

}  // namespace
}  // namespace roceqos
