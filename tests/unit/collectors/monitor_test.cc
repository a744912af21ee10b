#include "collectors/monitor.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <thread>

#include "tests/unit/support/netns.h"

namespace roceqos {
namespace {

using Clock = std::chrono::steady_clock;

// Parses the single message of a built datagram.
Result<std::optional<ChangeEvent>> ParseBuilt(netlink::Message& msg, Clock::time_point t) {
  Result<std::optional<ChangeEvent>> result = std::optional<ChangeEvent>();
  auto status = netlink::ForEachMessage(msg.bytes(), "test", [&](const netlink::NlMessage& m) {
    result = ParseChangeNotification(m, t);
    return Result<void>();
  });
  EXPECT_TRUE(status.ok()) << status.error().message;
  return result;
}

TEST(ChangeNotification, DcbSetNotificationNamesTheDevice) {
  // dcbnl_ieee_notify(netdev, RTM_SETDCB, DCB_CMD_IEEE_SET, ...): dcbmsg, IFNAME, IEEE nest, DCBX.
  netlink::Message msg(RTM_SETDCB, 0);
  dcbmsg header{AF_UNSPEC, DCB_CMD_IEEE_SET, 0};
  msg.PutHeader(&header, sizeof header);
  msg.PutString(DCB_ATTR_IFNAME, "sim0");
  size_t ieee = msg.BeginNest(DCB_ATTR_IEEE);
  ieee_pfc pfc{};
  pfc.pfc_en = 0x08;
  msg.Put(DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
  msg.EndNest(ieee);
  msg.PutU8(DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST);
  const auto t = Clock::now();
  auto event = ParseBuilt(msg, t);
  ASSERT_TRUE(event.ok()) << event.error().message;
  ASSERT_TRUE(event->has_value());
  EXPECT_EQ((*event)->kind, ChangeEvent::Kind::kDcb);
  EXPECT_EQ((*event)->netdev, "sim0");
  EXPECT_EQ((*event)->received, t);
}

TEST(ChangeNotification, LinkMessagesCarryNameIndexAndMtu) {
  for (uint16_t type : {uint16_t{RTM_NEWLINK}, uint16_t{RTM_DELLINK}}) {
    netlink::Message msg(type, 0);
    ifinfomsg ifi{};
    ifi.ifi_index = 7;
    msg.PutHeader(&ifi, sizeof ifi);
    msg.PutU32(IFLA_MTU, 9000);
    msg.PutString(IFLA_IFNAME, "ens1f0np0");
    auto event = ParseBuilt(msg, Clock::now());
    ASSERT_TRUE(event.ok()) << event.error().message;
    ASSERT_TRUE(event->has_value());
    EXPECT_EQ((*event)->kind,
              type == RTM_NEWLINK ? ChangeEvent::Kind::kLink : ChangeEvent::Kind::kLinkRemoved);
    EXPECT_EQ((*event)->netdev, "ens1f0np0");
    EXPECT_EQ((*event)->ifindex, 7);
    EXPECT_EQ((*event)->mtu, 9000u);
  }
}

TEST(ChangeNotification, OtherMessageTypesAreIgnored) {
  netlink::Message msg(RTM_NEWADDR, 0);
  ifaddrmsg ifa{};
  msg.PutHeader(&ifa, sizeof ifa);
  auto event = ParseBuilt(msg, Clock::now());
  ASSERT_TRUE(event.ok());
  EXPECT_FALSE(event->has_value());
}

TEST(ChangeNotification, MalformedMessagesAreErrors) {
  netlink::Message no_name(RTM_SETDCB, 0);
  dcbmsg header{AF_UNSPEC, DCB_CMD_IEEE_SET, 0};
  no_name.PutHeader(&header, sizeof header);
  no_name.PutU8(DCB_ATTR_DCBX, 1);
  EXPECT_FALSE(ParseBuilt(no_name, Clock::now()).ok());

  netlink::Message short_link(RTM_NEWLINK, 0);
  uint8_t two[2] = {0, 0};
  short_link.PutHeader(two, sizeof two);  // shorter than struct ifinfomsg
  EXPECT_FALSE(ParseBuilt(short_link, Clock::now()).ok());

  netlink::Message unterminated(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  unterminated.PutHeader(&ifi, sizeof ifi);
  const char raw[4] = {'e', 't', 'h', '0'};  // IFLA_IFNAME without its NUL
  unterminated.Put(IFLA_IFNAME, raw, sizeof raw);
  EXPECT_FALSE(ParseBuilt(unterminated, Clock::now()).ok());
}

// The real kernel: link changes in a private namespace arrive as events; Interrupt() unblocks a
// waiting thread.
TEST(ChangeMonitorKernel, LinkChangesInANamespaceArriveAsEvents) {
  std::string why;
  auto ns = testing::PrivateNetns::Create("monitor", &why);
  if (!ns) GTEST_SKIP() << why;
  std::unique_ptr<ChangeMonitor> monitor;
  ASSERT_TRUE(ns->Run(
      [&] {
        auto opened = ChangeMonitor::Open();
        ASSERT_TRUE(opened.ok()) << opened.error().message;
        monitor = std::move(*opened);
      },
      &why))
      << why;
  ASSERT_NE(monitor, nullptr);

  const auto before = Clock::now();
  ASSERT_TRUE(ns->Ip("link add qmon0 type veth peer name qmon1"));
  ASSERT_TRUE(ns->Ip("link set qmon0 mtu 4200"));

  // Poll for the MTU change with a deadline; unrelated events (qmon1, lo) may come first.
  bool saw_mtu = false;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!saw_mtu && Clock::now() < deadline) {
    auto events = monitor->Wait(std::chrono::milliseconds(500));
    ASSERT_TRUE(events.ok()) << events.error().message;
    for (const auto& e : *events) {
      EXPECT_GE(e.received, before);
      if (e.kind == ChangeEvent::Kind::kLink && e.netdev == "qmon0" && e.mtu == 4200u)
        saw_mtu = true;
    }
  }
  EXPECT_TRUE(saw_mtu);
  EXPECT_EQ(monitor->malformed_messages(), 0u);

  ASSERT_TRUE(ns->Ip("link del qmon0"));
  bool saw_removal = false;
  const auto deadline2 = Clock::now() + std::chrono::seconds(10);
  while (!saw_removal && Clock::now() < deadline2) {
    auto events = monitor->Wait(std::chrono::milliseconds(500));
    ASSERT_TRUE(events.ok());
    for (const auto& e : *events)
      saw_removal |= e.kind == ChangeEvent::Kind::kLinkRemoved && e.netdev == "qmon0";
  }
  EXPECT_TRUE(saw_removal);
}

TEST(ChangeMonitorKernel, InterruptWakesAWaitingThread) {
  auto opened = ChangeMonitor::Open();
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  ChangeMonitor& monitor = **opened;
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    // A day: only Interrupt() can end this wait within the test's lifetime.
    auto events = monitor.Wait(std::chrono::hours(24));
    EXPECT_TRUE(events.ok());
    returned = true;
  });
  monitor.Interrupt();
  waiter.join();
  EXPECT_TRUE(returned);
}

}  // namespace
}  // namespace roceqos

namespace roceqos {
namespace {

// Every read outcome that can lose a notification must ask for a full re-read, with the reason
// that labels roce_qos_monitor_resyncs_total; a clean read must not (a resync re-reads every
// device, so a spurious one costs a full discovery on every wake-up).
TEST(MonitorResync, EveryReadErrorAndEveryMalformedMessageResyncs) {
  using Reason = ChangeEvent::ResyncReason;
  EXPECT_EQ(ResyncReasonFor(Result<size_t>(MakeError(ENOBUFS, "overflow")), 0), Reason::kOverflow);
  EXPECT_EQ(ResyncReasonFor(Result<size_t>(MakeError(EMSGSIZE, "truncated")), 0),
            Reason::kReadError);
  EXPECT_EQ(ResyncReasonFor(Result<size_t>(MakeError(0, "nlmsg_len 9 past the datagram")), 0),
            Reason::kReadError);
  EXPECT_EQ(ResyncReasonFor(Result<size_t>(size_t{3}), 1), Reason::kMalformed);
  EXPECT_EQ(ResyncReasonFor(Result<size_t>(size_t{3}), 0), std::nullopt);
  EXPECT_EQ(ResyncReasonFor(Result<size_t>(size_t{0}), 0), std::nullopt);
}

// The per-wake-up bound: with several datagrams queued, a read bounded to one returns after one
// and leaves the rest for the next call (so a storm cannot hold the monitor thread). `ip` returns
// after the kernel has queued its notifications, so no waiting is needed.
TEST(MonitorResync, ReadNotificationsStopsAfterMaxDatagrams) {
  std::string why;
  auto ns = testing::PrivateNetns::Create("monbound", &why);
  if (!ns) GTEST_SKIP() << why;
  std::optional<netlink::Socket> socket;
  ASSERT_TRUE(ns->Run(
      [&] {
        auto opened = netlink::Socket::Open(NETLINK_ROUTE);
        ASSERT_TRUE(opened.ok()) << opened.error().message;
        socket.emplace(std::move(*opened));
        ASSERT_TRUE(socket->JoinGroup(RTNLGRP_LINK).ok());
      },
      &why))
      << why;
  ASSERT_TRUE(socket.has_value());
  ASSERT_TRUE(ns->Ip("link add qbnd0 type veth peer name qbnd1"));
  ASSERT_TRUE(ns->Ip("link set qbnd0 mtu 4000"));
  ASSERT_TRUE(ns->Ip("link set qbnd0 mtu 4100"));
  auto count = [](const netlink::NlMessage&) -> Result<void> { return {}; };
  auto first = socket->ReadNotifications(count, 1);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, 1u);  // one RTM_NEWLINK per datagram
  auto rest = socket->ReadNotifications(count);
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_GE(*rest, 2u);  // qbnd1 creation and the two MTU changes were still queued
  ASSERT_TRUE(ns->Ip("link del qbnd0"));
}

TEST(MonitorResync, ReasonNamesAreTheMetricLabels) {
  EXPECT_EQ(NameOf(kResyncReasonNames, ChangeEvent::ResyncReason::kOverflow), "overflow");
  EXPECT_EQ(NameOf(kResyncReasonNames, ChangeEvent::ResyncReason::kReadError), "read_error");
  EXPECT_EQ(NameOf(kResyncReasonNames, ChangeEvent::ResyncReason::kMalformed), "malformed");
}

}  // namespace
}  // namespace roceqos
