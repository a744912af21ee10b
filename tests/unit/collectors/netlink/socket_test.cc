#include "collectors/netlink/socket.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "collectors/netlink/genl.h"
#include "tests/unit/support/netlink_messages.h"
#include "tests/unit/support/netns.h"

namespace roceqos::netlink {
namespace {

using testing::Buffer;
using testing::Concat;
using ::testing::Contains;
using testing::DoneReply;
using testing::ErrorReply;
using testing::Finish;
using ::testing::HasSubstr;

constexpr uint32_t kPort = 4242;
constexpr uint32_t kSeq = 77;

constexpr auto kLinkNamePolicy = MakePolicy<IFLA_IFNAME + 1>({
    {IFLA_IFNAME, attr::Required(attr::String("IFLA_IFNAME", 16))},
});

Buffer LinkReply(std::string_view name, uint16_t flags, uint32_t seq = kSeq,
                 uint32_t port = kPort) {
  Message msg(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  msg.PutHeader(&ifi, sizeof(ifi));
  msg.PutString(IFLA_IFNAME, name);
  return Finish(msg, flags, seq, port);
}

/// Collects IFLA_IFNAME of every RTM_NEWLINK reply.
struct NameCollector {
  std::vector<std::string> names;
  ReplyHandler handler() {
    return [this](const NlMessage& msg) -> Result<void> {
      if (msg.header.nlmsg_type != RTM_NEWLINK) return {};
      Result<Bytes> payload = Payload(msg, sizeof(ifinfomsg), "RTM_NEWLINK");
      if (!payload) return payload.error();
      Result<Attrs> attrs = Attrs::Parse(*payload, kLinkNamePolicy, "RTM_NEWLINK");
      if (!attrs) return attrs.error();
      names.emplace_back(*attrs->String(IFLA_IFNAME));
      return {};
    };
  }
};

// --- Message -------------------------------------------------------------------------------

TEST(Message, BuildsHeaderFamilyHeaderAttributesAndNests) {
  Message msg(RTM_GETLINK, NLM_F_DUMP);
  ifinfomsg ifi{};
  ifi.ifi_index = 7;
  msg.PutHeader(&ifi, sizeof(ifi));
  std::string_view not_terminated = std::string_view("eth0-and-more").substr(0, 4);
  msg.PutString(IFLA_IFNAME, not_terminated);
  size_t nest = msg.BeginNest(IFLA_LINKINFO);
  msg.PutString(IFLA_INFO_KIND, "veth");
  msg.EndNest(nest);
  ASSERT_TRUE(msg.ok());
  EXPECT_EQ(msg.header()->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  EXPECT_EQ(msg.bytes().size(), msg.header()->nlmsg_len);

  int count = 0;
  Result<void> walked = ForEachMessage(msg.bytes(), "built", [&](const NlMessage& m) {
    ++count;
    Result<ifinfomsg> header = FamilyHeader<ifinfomsg>(m, "built");
    EXPECT_TRUE(header);
    if (header) {
      EXPECT_EQ(header->ifi_index, 7);
    }
    Result<Bytes> payload = Payload(m, sizeof(ifinfomsg), "built");
    EXPECT_TRUE(payload);
    constexpr auto kPolicy = MakePolicy<IFLA_LINKINFO + 1>({
        {IFLA_IFNAME, attr::String("IFLA_IFNAME", 16)},
        {IFLA_LINKINFO, attr::Nested("IFLA_LINKINFO")},
    });
    Result<Attrs> attrs = Attrs::Parse(*payload, kPolicy, "built");
    EXPECT_TRUE(attrs);
    EXPECT_EQ(attrs->String(IFLA_IFNAME), "eth0");
    EXPECT_EQ(attrs->Raw(IFLA_IFNAME).size(), 5u);  // NUL included
    constexpr auto kInfo = MakePolicy<IFLA_INFO_KIND + 1>({
        {IFLA_INFO_KIND, attr::String("IFLA_INFO_KIND")},
    });
    Result<Attrs> info = attrs->Nested(IFLA_LINKINFO, kInfo, "built");
    EXPECT_TRUE(info);
    EXPECT_EQ(info->String(IFLA_INFO_KIND), "veth");
    return Result<void>();
  });
  ASSERT_TRUE(walked) << walked.error().message;
  EXPECT_EQ(count, 1);
}

TEST(Message, RefusesAnAttributeBeyondNetlinksLengthField) {
  Message msg(RTM_GETLINK, 0);
  std::vector<char> huge(70000);
  msg.Put(IFLA_IFNAME, huge.data(), huge.size());
  EXPECT_FALSE(msg.ok());
}

// --- ForEachMessage / Payload --------------------------------------------------------------

TEST(ForEachMessage, SplitsADatagramAndRejectsBadLengths) {
  Buffer two = Concat({LinkReply("a", NLM_F_MULTI), LinkReply("bb", NLM_F_MULTI)});
  NameCollector names;
  ASSERT_TRUE(ForEachMessage(two, "ctx", names.handler()));
  EXPECT_EQ(names.names, (std::vector<std::string>{"a", "bb"}));

  Buffer truncated = two;
  truncated.resize(two.size() - 3);
  Result<void> walked =
      ForEachMessage(truncated, "ctx", [](const NlMessage&) { return Result<void>(); });
  ASSERT_FALSE(walked);
  EXPECT_THAT(walked.error().message, HasSubstr("does not fit"));

  Buffer short_len = LinkReply("a", 0);
  uint32_t bogus = 8;  // below sizeof(nlmsghdr)
  std::memcpy(short_len.data(), &bogus, sizeof(bogus));
  EXPECT_FALSE(ForEachMessage(short_len, "ctx", [](const NlMessage&) { return Result<void>(); }));

  Buffer stub(10);
  walked = ForEachMessage(stub, "ctx", [](const NlMessage&) { return Result<void>(); });
  ASSERT_FALSE(walked);
  EXPECT_THAT(walked.error().message, HasSubstr("truncated netlink header"));
}

TEST(Payload, RejectsAMessageShorterThanItsFamilyHeader) {
  Message msg(RTM_NEWLINK, 0);
  Buffer bytes = Finish(msg, 0, 1, 1);
  ASSERT_TRUE(ForEachMessage(bytes, "ctx", [](const NlMessage& m) {
    Result<Bytes> payload = Payload(m, sizeof(ifinfomsg), "RTM_NEWLINK");
    EXPECT_FALSE(payload);
    if (!payload) {
      EXPECT_THAT(payload.error().message, HasSubstr("16-byte family header"));
    }
    EXPECT_FALSE(FamilyHeader<ifinfomsg>(m, "RTM_NEWLINK"));
    return Result<void>();
  }));
}

// --- NLMSG_ERROR / NLMSG_DONE --------------------------------------------------------------

Result<void> ParseOne(const Buffer& datagram, bool done_message = false) {
  Result<void> parsed = MakeError(-1, "no message");
  Result<void> walked = ForEachMessage(datagram, "ctx", [&](const NlMessage& m) {
    parsed = done_message ? ParseDoneMessage(m, "RTM_GETLINK ifindex 9")
                          : ParseErrorMessage(m, "RTM_GETLINK ifindex 9");
    return Result<void>();
  });
  if (!walked) return walked;
  return parsed;
}

TEST(ParseErrorMessage, AnAckIsSuccess) { EXPECT_TRUE(ParseOne(ErrorReply(0, 1, 1))); }

TEST(ParseErrorMessage, AnErrorWithoutExtackCarriesErrnoAndContext) {
  Result<void> parsed = ParseOne(ErrorReply(-ENODEV, 1, 1));
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().errnum, ENODEV);
  EXPECT_EQ(parsed.error().message, "RTM_GETLINK ifindex 9: No such device");
}

TEST(ParseErrorMessage, AnErrorWithExtackCarriesTheKernelsText) {
  Result<void> parsed = ParseOne(ErrorReply(-EINVAL, 1, 1, "Invalid values in header"));
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().errnum, EINVAL);
  EXPECT_EQ(parsed.error().message,
            "RTM_GETLINK ifindex 9: Invalid argument (Invalid values in header)");
}

TEST(ParseErrorMessage, FindsTheExtackAfterAnEchoedRequest) {
  Result<void> parsed = ParseOne(ErrorReply(-EOPNOTSUPP, 1, 1, "no dcbnl_ops", /*capped=*/false,
                                            /*echoed_payload=*/24));
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().errnum, EOPNOTSUPP);
  EXPECT_TRUE(parsed.error().NotSupported());
  EXPECT_THAT(parsed.error().message, HasSubstr("(no dcbnl_ops)"));
}

TEST(ParseErrorMessage, NamesAMissingAttribute) {
  Result<void> parsed = ParseOne(ErrorReply(-EINVAL, 1, 1, {}, true, 0, /*missing_type=*/3));
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message, HasSubstr("missing attribute type 3"));
}

TEST(ParseErrorMessage, RejectsATruncatedErrorAndAPositiveErrno) {
  Buffer truncated = ErrorReply(-ENODEV, 1, 1);
  truncated.resize(sizeof(nlmsghdr) + 8);
  uint32_t len = static_cast<uint32_t>(truncated.size());
  std::memcpy(truncated.data(), &len, sizeof(len));
  Result<void> parsed = ParseOne(truncated);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().errnum, EPROTO);

  parsed = ParseOne(ErrorReply(5, 1, 1));
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().errnum, EPROTO);
}

TEST(ParseDoneMessage, ZeroEndsTheDumpANegativeValueIsItsError) {
  EXPECT_TRUE(ParseOne(DoneReply(0, 1, 1), true));
  Result<void> parsed = ParseOne(DoneReply(-EMSGSIZE, 1, 1, "dump too big"), true);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().errnum, EMSGSIZE);
  EXPECT_THAT(parsed.error().message, HasSubstr("(dump too big)"));
}

// --- ReplyReader ---------------------------------------------------------------------------

TEST(ReplyReader, ADumpEndsAtNlmsgDoneAcrossDatagrams) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST | NLM_F_DUMP, "dump");
  NameCollector names;
  Result<bool> done = reader.Feed(
      Concat({LinkReply("lo", NLM_F_MULTI), LinkReply("eth0", NLM_F_MULTI)}), names.handler());
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_FALSE(*done);
  done = reader.Feed(Concat({LinkReply("eth1", NLM_F_MULTI), DoneReply(0, kSeq, kPort)}),
                     names.handler());
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_TRUE(*done);
  EXPECT_EQ(names.names, (std::vector<std::string>{"lo", "eth0", "eth1"}));
}

TEST(ReplyReader, RejectsAFutureSequenceNumber) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST | NLM_F_DUMP, "RTM_GETLINK dump");
  NameCollector names;
  Result<bool> done = reader.Feed(LinkReply("lo", NLM_F_MULTI, kSeq + 1), names.handler());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EPROTO);
  EXPECT_THAT(done.error().message, HasSubstr("sequence 78, expected 77"));
  EXPECT_TRUE(names.names.empty());
}

TEST(ReplyReader, RejectsARepliesForAnotherPort) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST | NLM_F_DUMP, "RTM_GETLINK dump");
  NameCollector names;
  Result<bool> done = reader.Feed(LinkReply("lo", NLM_F_MULTI, kSeq, kPort + 1), names.handler());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EPROTO);
  EXPECT_THAT(done.error().message, HasSubstr("port id 4243"));
  EXPECT_TRUE(names.names.empty());
}

TEST(ReplyReader, SkipsTheTailOfAnEarlierExchange) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST, "doit");
  NameCollector names;
  Result<bool> done =
      reader.Feed(Concat({LinkReply("old", NLM_F_MULTI, kSeq - 1), DoneReply(0, kSeq - 1, kPort)}),
                  names.handler());
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_FALSE(*done);
  EXPECT_EQ(reader.stale_messages(), 2u);
  EXPECT_TRUE(names.names.empty());
  done = reader.Feed(LinkReply("new", 0), names.handler());
  ASSERT_TRUE(done);
  EXPECT_TRUE(*done);  // a doit without NLM_F_ACK is complete with its single reply
  EXPECT_EQ(names.names, std::vector<std::string>{"new"});
}

TEST(ReplyReader, SequenceComparisonSurvivesWrapAround) {
  ReplyReader reader(2, kPort, NLM_F_REQUEST, "doit");
  NameCollector names;
  Result<bool> done = reader.Feed(LinkReply("old", 0, 0xfffffffe), names.handler());
  ASSERT_TRUE(done);
  EXPECT_FALSE(*done);
  EXPECT_EQ(reader.stale_messages(), 1u);
}

TEST(ReplyReader, ADoitWithAckWaitsForTheAck) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST | NLM_F_ACK, "doit");
  NameCollector names;
  Result<bool> done = reader.Feed(LinkReply("eth0", 0), names.handler());
  ASSERT_TRUE(done);
  EXPECT_FALSE(*done);
  done = reader.Feed(ErrorReply(0, kSeq, kPort), names.handler());
  ASSERT_TRUE(done);
  EXPECT_TRUE(*done);
}

TEST(ReplyReader, AnErrorEndsTheExchangeWithTheKernelsErrno) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST | NLM_F_ACK, "RTM_GETDCB lo");
  NameCollector names;
  Result<bool> done = reader.Feed(ErrorReply(-EOPNOTSUPP, kSeq, kPort), names.handler());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EOPNOTSUPP);
  EXPECT_THAT(done.error().message, HasSubstr("RTM_GETDCB lo"));
}

TEST(ReplyReader, AnInterruptedDumpIsReportedAtItsEnd) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST | NLM_F_DUMP, "dump");
  NameCollector names;
  Result<bool> done = reader.Feed(
      Concat({LinkReply("lo", NLM_F_MULTI | NLM_F_DUMP_INTR), DoneReply(0, kSeq, kPort)}),
      names.handler());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EINTR);
}

TEST(ReplyReader, AHandlerErrorStopsTheExchange) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST | NLM_F_DUMP, "dump");
  int calls = 0;
  Result<bool> done =
      reader.Feed(Concat({LinkReply("lo", NLM_F_MULTI), LinkReply("eth0", NLM_F_MULTI)}),
                  [&](const NlMessage&) -> Result<void> {
                    ++calls;
                    return MakeError(0, "bad link");
                  });
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().message, "bad link");
  EXPECT_EQ(calls, 1);
}

TEST(ReplyReader, AfterAHandlerErrorItStillFindsTheEndOfTheDump) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST | NLM_F_DUMP, "dump");
  int calls = 0;
  ReplyHandler failing = [&](const NlMessage&) -> Result<void> {
    ++calls;
    return MakeError(0, "bad link");
  };
  Result<bool> done =
      reader.Feed(Concat({LinkReply("lo", NLM_F_MULTI), LinkReply("eth0", NLM_F_MULTI)}), failing);
  ASSERT_FALSE(done);
  EXPECT_FALSE(reader.complete());  // the caller must drain
  done = reader.Feed(Concat({LinkReply("eth1", NLM_F_MULTI), DoneReply(0, kSeq, kPort)}), failing);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().message, "bad link");
  EXPECT_TRUE(reader.complete());
  EXPECT_EQ(calls, 1);
}

TEST(ReplyReader, RejectsMessagesAfterTheEnd) {
  ReplyReader reader(kSeq, kPort, NLM_F_REQUEST, "doit");
  NameCollector names;
  Result<bool> done = reader.Feed(Concat({LinkReply("a", 0), LinkReply("b", 0)}), names.handler());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EPROTO);
}

// --- A real NETLINK_ROUTE socket -----------------------------------------------------------

Message GetLink(int32_t ifindex, uint16_t flags, uint16_t ifi_type = 0) {
  Message msg(RTM_GETLINK, flags);
  ifinfomsg ifi{};
  ifi.ifi_index = ifindex;
  ifi.ifi_type = ifi_type;
  msg.PutHeader(&ifi, sizeof(ifi));
  return msg;
}

TEST(RealRouteSocket, DumpsLinksIncludingLo) {
  Result<Socket> socket = Socket::Open(NETLINK_ROUTE);
  ASSERT_TRUE(socket) << socket.error().message;
  EXPECT_NE(socket->port_id(), 0u);
  Message request = GetLink(0, NLM_F_DUMP);
  NameCollector names;
  Result<void> status = socket->Request(request, names.handler(), "RTM_GETLINK dump");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_THAT(names.names, Contains("lo"));

  // The socket is reusable: a doit for lo's ifindex returns exactly lo.
  Message doit = GetLink(1, NLM_F_ACK);
  NameCollector one;
  status = socket->Request(doit, one.handler(), "RTM_GETLINK 1");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(one.names, std::vector<std::string>{"lo"});
}

TEST(RealRouteSocket, AMissingIfindexIsEnodev) {
  Result<Socket> socket = Socket::Open(NETLINK_ROUTE);
  ASSERT_TRUE(socket) << socket.error().message;
  Message request = GetLink(0x7ffffff0, NLM_F_ACK);
  NameCollector names;
  Result<void> status = socket->Request(request, names.handler(), "RTM_GETLINK 2147483632");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().errnum, ENODEV);
  EXPECT_THAT(status.error().message, HasSubstr("RTM_GETLINK 2147483632: No such device"));
  EXPECT_TRUE(names.names.empty());
}

TEST(RealRouteSocket, TheKernelsExtackTextReachesTheError) {
  SocketOptions options;
  options.strict_checking = true;
  Result<Socket> socket = Socket::Open(NETLINK_ROUTE, options);
  ASSERT_TRUE(socket) << socket.error().message;
  // rtnl_valid_getlink_req: with strict checking a non-zero ifi_type is rejected with an extack.
  Message request = GetLink(1, NLM_F_ACK, /*ifi_type=*/1);
  NameCollector names;
  Result<void> status = socket->Request(request, names.handler(), "RTM_GETLINK strict");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().errnum, EINVAL);
  EXPECT_THAT(status.error().message, HasSubstr("RTM_GETLINK strict: Invalid argument ("));
  EXPECT_THAT(status.error().message, HasSubstr("header"));
}

TEST(RealRouteSocket, AMissingReplyTimesOutAndTheSocketStaysUsable) {
  SocketOptions options;
  options.receive_timeout = std::chrono::milliseconds(50);
  Result<Socket> socket = Socket::Open(NETLINK_ROUTE, options);
  ASSERT_TRUE(socket) << socket.error().message;
  // netlink_rcv_skb answers an NLMSG_NOOP only when NLM_F_ACK is set: nothing comes back.
  Message silent(NLMSG_NOOP, 0);
  NameCollector names;
  Result<void> status = socket->Request(silent, names.handler(), "NLMSG_NOOP");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().errnum, ETIMEDOUT);
  EXPECT_THAT(status.error().message, HasSubstr("no reply within 50 ms"));

  Message dump = GetLink(0, NLM_F_DUMP);
  status = socket->Request(dump, names.handler(), "RTM_GETLINK dump");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_THAT(names.names, Contains("lo"));
}

TEST(RealRouteSocket, AnAbandonedDumpDoesNotConfuseTheNextRequest) {
  Result<Socket> socket = Socket::Open(NETLINK_ROUTE);
  ASSERT_TRUE(socket) << socket.error().message;
  Message first = GetLink(0, NLM_F_DUMP);
  Result<void> status = socket->Request(
      first, [](const NlMessage&) -> Result<void> { return MakeError(0, "give up"); },
      "abandoned dump");
  ASSERT_FALSE(status);
  // The rest of that dump (at least its NLMSG_DONE) is still queued with the old sequence.
  Message second = GetLink(0, NLM_F_DUMP);
  NameCollector names;
  status = socket->Request(second, names.handler(), "second dump");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_THAT(names.names, Contains("lo"));
}

TEST(RealRouteSocket, ADatagramLargerThanTheBufferIsEmsgsize) {
  SocketOptions options;
  options.receive_buffer_bytes = 64;
  Result<Socket> socket = Socket::Open(NETLINK_ROUTE, options);
  ASSERT_TRUE(socket) << socket.error().message;
  Message request = GetLink(1, 0);
  NameCollector names;
  Result<void> status = socket->Request(request, names.handler(), "RTM_GETLINK 1");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().errnum, EMSGSIZE);
  EXPECT_THAT(status.error().message, HasSubstr("MSG_TRUNC"));
  EXPECT_TRUE(names.names.empty());
}

TEST(RealRouteSocket, AnOversizedRequestIsNotSent) {
  Result<Socket> socket = Socket::Open(NETLINK_ROUTE);
  ASSERT_TRUE(socket) << socket.error().message;
  Message request = GetLink(1, NLM_F_ACK);
  std::vector<char> huge(70000);
  request.Put(IFLA_IFNAME, huge.data(), huge.size());
  Result<void> status = socket->Request(
      request, [](const NlMessage&) { return Result<void>(); }, "huge");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().errnum, EMSGSIZE);
}

TEST(RealRouteSocket, MonitorsLinkNotificationsInAPrivateNetns) {
  std::string why;
  auto netns = roceqos::testing::PrivateNetns::Create("mon", &why);
  if (!netns) GTEST_SKIP() << why;

  std::vector<std::string> seen;
  size_t pending_before = 99;
  Error request_error;
  std::string failure;
  ASSERT_TRUE(netns->Run(
      [&] {
        Result<Socket> monitor = Socket::Open(NETLINK_ROUTE);
        if (!monitor) {
          failure = monitor.error().message;
          return;
        }
        if (Result<void> joined = monitor->JoinGroup(RTNLGRP_LINK); !joined) {
          failure = joined.error().message;
          return;
        }
        NameCollector names;
        Result<size_t> nothing = monitor->ReadNotifications(names.handler());
        if (!nothing) {
          failure = nothing.error().message;
          return;
        }
        pending_before = *nothing;
        Message request = GetLink(0, NLM_F_DUMP);
        Result<void> refused = monitor->Request(request, names.handler(), "on a monitor");
        if (!refused) request_error = refused.error();

        if (!netns->Ip("link add vmon0 type veth peer name vmon1")) {
          failure = "ip link add veth failed";
          return;
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::find(names.names.begin(), names.names.end(), "vmon0") == names.names.end() &&
               std::chrono::steady_clock::now() < deadline) {
          pollfd pfd{monitor->fd(), POLLIN, 0};
          if (poll(&pfd, 1, 1000) <= 0) continue;
          Result<size_t> read = monitor->ReadNotifications(names.handler());
          if (!read) {
            failure = read.error().message;
            return;
          }
        }
        seen = names.names;
      },
      &why))
      << why;
  ASSERT_TRUE(failure.empty()) << failure;
  EXPECT_EQ(pending_before, 0u);
  EXPECT_EQ(request_error.errnum, EINVAL);
  EXPECT_THAT(seen, Contains("vmon0"));
  EXPECT_THAT(seen, Contains("vmon1"));
}

// --- Generic netlink -----------------------------------------------------------------------

TEST(RealGenericSocket, ResolvesTheControllerFamilyAndRejectsAnUnknownOne) {
  Result<Socket> socket = Socket::Open(NETLINK_GENERIC);
  ASSERT_TRUE(socket) << socket.error().message;
  Result<GenlFamily> ctrl = ResolveGenlFamily(*socket, "nlctrl");
  ASSERT_TRUE(ctrl) << ctrl.error().message;
  EXPECT_EQ(ctrl->id, GENL_ID_CTRL);
  std::vector<std::string> groups;
  for (const auto& group : ctrl->multicast_groups) groups.push_back(group.name);
  EXPECT_THAT(groups, Contains("notify"));

  Result<GenlFamily> missing = ResolveGenlFamily(*socket, "roceqos-nofam");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().errnum, ENOENT);
  EXPECT_THAT(missing.error().message, HasSubstr("CTRL_CMD_GETFAMILY roceqos-nofam"));
}

TEST(RealSockets, AnUnknownProtocolIsAnErrorWithItsErrno) {
  Result<Socket> socket = Socket::Open(31);  // MAX_LINKS - 1: no such netlink family
  ASSERT_FALSE(socket);
  EXPECT_NE(socket.error().errnum, 0);
  EXPECT_THAT(socket.error().message, HasSubstr("protocol 31"));
}

}  // namespace
}  // namespace roceqos::netlink
