#include "exporter/http/listen_address.h"

#include <gtest/gtest.h>

namespace roceqos {
namespace {

TEST(ParseListenAddress, EveryInterfaceIsOneDualStackSocket) {
  const ListenAddress any = ParseListenAddress(":9879").value();
  EXPECT_EQ(any.family, AF_UNSPEC);
  EXPECT_TRUE(any.dual_stack);
  EXPECT_EQ(any.port, 9879);
  EXPECT_EQ(FormatListenAddress(any), ":9879");
}

TEST(ParseListenAddress, Ipv4HostsAndLocalhost) {
  const ListenAddress v4 = ParseListenAddress("127.0.0.1:9879").value();
  EXPECT_EQ(v4.family, AF_INET);
  EXPECT_EQ(v4.host, "127.0.0.1");
  EXPECT_FALSE(v4.dual_stack);
  EXPECT_EQ(ParseListenAddress("localhost:0").value().host, "127.0.0.1");
  const ListenAddress all_v4 = ParseListenAddress("0.0.0.0:80").value();
  EXPECT_EQ(all_v4.family, AF_INET);
  EXPECT_EQ(all_v4.port, 80);
  EXPECT_EQ(FormatListenAddress(all_v4), "0.0.0.0:80");
}

TEST(ParseListenAddress, Ipv6HostsInBrackets) {
  const ListenAddress loopback = ParseListenAddress("[::1]:9879").value();
  EXPECT_EQ(loopback.family, AF_INET6);
  EXPECT_EQ(loopback.host, "::1");
  EXPECT_FALSE(loopback.dual_stack) << "a specific IPv6 address takes no IPv4";
  EXPECT_EQ(FormatListenAddress(loopback), "[::1]:9879");
  const ListenAddress any = ParseListenAddress("[::]:9879").value();
  EXPECT_EQ(any.family, AF_INET6);
  EXPECT_TRUE(any.dual_stack) << "[::] takes IPv4 too, as Go's net.Listen";
  EXPECT_EQ(ParseListenAddress("[fd00::1:2]:65535").value().host, "fd00::1:2");
}

TEST(ParseListenAddress, RefusesWithTheReason) {
  for (const char* bad : {"", "9879", ":", ":x", ":65536", ":-1", "host.example:80", "1.2.3:80",
                          "127.0.0.1:80s", "[::1]", "::1:9879", "[::1:9879", "[]:80",
                          "[1.2.3.4]:80", "[fe80::1%eth0]:80", "[::1]x:80"}) {
    const Result<ListenAddress> parsed = ParseListenAddress(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message.find("--web.listen-address"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace roceqos
