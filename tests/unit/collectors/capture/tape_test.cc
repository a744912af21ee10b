// The capture seam (collectors/capture/tape.h) and its bundle format
// (collectors/capture/tape_bundle.h).

#include "collectors/capture/tape.h"

#include <gtest/gtest.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "collectors/discovery.h"
#include "collectors/ethtool.h"
#include "collectors/ethtool_ioctl.h"
#include "collectors/host.h"
#include "collectors/netlink/socket.h"
#include "collectors/sysfs_file.h"

namespace roceqos::tape {
namespace {

Blob ToBlob(std::span<const std::byte> bytes) { return Blob(bytes.begin(), bytes.end()); }

// Restores live mode whatever a test did.
class TapeTest : public ::testing::Test {
 protected:
  void TearDown() override { Reset(); }
};

TEST(TapeBundle, RoundTripsEveryRecordKind) {
  Bundle bundle;
  bundle.meta = {{"kernel.release", "6.1.0-56-amd64"}, {"live.metrics", "a b\nc%d\n"}};
  bundle.netlink.push_back({20,
                            7,
                            1234,
                            0,
                            Blob{std::byte{1}, std::byte{2}},
                            {Blob{std::byte{3}}, Blob{std::byte{4}, std::byte{5}, std::byte{6}}}});
  bundle.netlink.push_back({20, 0, 0, EPROTONOSUPPORT, {}, {}});
  bundle.ioctls.push_back({"ens1f0np0", 0, Blob{std::byte{0x0b}}, Blob{std::byte{0xff}}});
  bundle.fs.push_back({"read", "/sys/class/net/a b/ecn", ENOENT, ""});
  bundle.fs.push_back({"list", "/sys/x", 0, "f1\nf2"});
  Result<Bundle> parsed = Parse(Serialize(bundle));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->meta, bundle.meta);
  ASSERT_EQ(parsed->netlink.size(), 2u);
  EXPECT_EQ(parsed->netlink[0].replies, bundle.netlink[0].replies);
  EXPECT_EQ(parsed->netlink[0].port_id, 1234u);
  EXPECT_EQ(parsed->netlink[1].errnum, EPROTONOSUPPORT);
  EXPECT_EQ(parsed->ioctls[0].out, bundle.ioctls[0].out);
  EXPECT_EQ(parsed->fs[0].path, "/sys/class/net/a b/ecn");
  EXPECT_EQ(parsed->fs[1].data, "f1\nf2");
}

TEST(TapeBundle, Base64MatchesRfc4648Vectors) {
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Decode("Zm9vYg==").value(), "foob");
  EXPECT_FALSE(Base64Decode("Zm9"));
  EXPECT_FALSE(Base64Decode("Z=9v"));
  EXPECT_FALSE(Unescape("%4"));
  EXPECT_FALSE(Unescape("%zz"));
}

TEST(TapeBundle, MalformedInputIsAnErrorNamingTheLine) {
  EXPECT_FALSE(Parse("not a bundle\n"));
  Result<Bundle> bad = Parse("roce-qos-capture 1\nmeta a b\nnetlink 0 1 2 x - -\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("line 3"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(Parse("roce-qos-capture 1\nwhatever\n"));
  EXPECT_FALSE(Parse("roce-qos-capture 1\nioctl lo 0 !!!! -\n"));
  EXPECT_FALSE(Parse("roce-qos-capture 2\n"));
}

TEST(TapeSanitize, LinkDumpKeepsOnlyWhatDiscoveryReads) {
  netlink::Message msg(RTM_NEWLINK, NLM_F_MULTI);
  ifinfomsg ifi{};
  ifi.ifi_index = 5;
  msg.PutHeader(&ifi, sizeof(ifi));
  msg.PutString(IFLA_IFNAME, "bond0");
  const uint8_t mac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
  msg.Put(IFLA_ADDRESS, mac, sizeof(mac));
  msg.PutU32(IFLA_MTU, 9000);
  msg.PutU32(IFLA_CARRIER_CHANGES, 6);  // roce_netdev_carrier_changes_total, replayed too
  const size_t info = msg.BeginNest(IFLA_LINKINFO);
  msg.PutString(IFLA_INFO_KIND, "bond");
  const size_t data = msg.BeginNest(IFLA_INFO_DATA);
  msg.PutU32(1, 0x0a00020f);  // an arp_ip_target-like address
  msg.EndNest(data);
  msg.EndNest(info);
  const Blob sanitized = SanitizeRouteDatagram(ToBlob(msg.bytes()));
  const std::string text(reinterpret_cast<const char*>(sanitized.data()), sanitized.size());
  EXPECT_EQ(text.find(std::string(reinterpret_cast<const char*>(mac), 6)), std::string::npos);
  EXPECT_EQ(text.find("\x0f\x02\x00\x0a", 0, 4), std::string::npos);
  nlmsghdr header;
  std::memcpy(&header, sanitized.data(), sizeof(header));
  EXPECT_EQ(header.nlmsg_len, sanitized.size());
  Result<Device> device = ParseLinkReply(netlink::Bytes(sanitized).subspan(sizeof(nlmsghdr)));
  ASSERT_TRUE(device) << device.error().message;
  EXPECT_EQ(device->name, "bond0");
  EXPECT_EQ(device->mtu, 9000u);
  EXPECT_EQ(device->kind, "bond");
  EXPECT_EQ(device->carrier_changes, std::optional<uint32_t>(6));
}

TEST_F(TapeTest, ReplayAnswersInOrderThenRepeatsTheLast) {
  Bundle bundle;
  bundle.fs.push_back({"read", "/sys/a", 0, "1\n"});
  bundle.fs.push_back({"read", "/sys/a", 0, "2\n"});
  bundle.fs.push_back({"read", "/sys/gone", ENOENT, ""});
  StartReplay(bundle);
  EXPECT_EQ(ReadSmallFile("/sys/a").content, "1\n");
  EXPECT_EQ(ReadSmallFile("/sys/a").content, "2\n");
  EXPECT_EQ(ReadSmallFile("/sys/a").content, "2\n");
  EXPECT_TRUE(ReadSmallFile("/sys/gone").missing);
  EXPECT_TRUE(ReadSmallFile("/never/recorded").missing);
}

TEST_F(TapeTest, EthtoolIoctlRecordsAndReplaysTheCommandBuffer) {
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  const auto* in = reinterpret_cast<const std::byte*>(&info);
  ethtool_drvinfo answer = info;
  std::strcpy(answer.driver, "mlx5_core");
  const auto* out = reinterpret_cast<const std::byte*>(&answer);
  Bundle bundle;
  bundle.ioctls.push_back(
      {"ens1f0np0", 0, Blob(in, in + sizeof(info)), Blob(out, out + sizeof(answer))});
  bundle.ioctls.push_back({"ens1f1np1", EOPNOTSUPP, Blob(in, in + sizeof(info)), {}});
  StartReplay(bundle);
  ASSERT_TRUE(EthtoolIoctl(-1, "ens1f0np0", &info, "ETHTOOL_GDRVINFO"));
  EXPECT_STREQ(info.driver, "mlx5_core");
  ethtool_drvinfo other{};
  other.cmd = ETHTOOL_GDRVINFO;
  Result<void> refused = EthtoolIoctl(-1, "ens1f1np1", &other, "ETHTOOL_GDRVINFO");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().errnum, EOPNOTSUPP);
  EXPECT_EQ(EthtoolIoctl(-1, "eth9", &other, "ETHTOOL_GDRVINFO").error().errnum, ENODATA);
}

// The data area after a command's fixed struct is output: the ethtool collector reuses one buffer
// for every netdev, so it holds what the previous call left. A recording keeps the fixed struct
// only, against the real kernel (lo has no ethtool stats: the refusal is recorded all the same).
TEST_F(TapeTest, RecordingKeepsOnlyTheFixedStructOfACommand) {
  constexpr uint32_t kStats = 4;
  alignas(ethtool_stats) unsigned char buffer[sizeof(ethtool_stats) + kStats * sizeof(uint64_t)];
  std::memset(buffer, 0xab, sizeof(buffer));  // what another netdev's values left behind
  ethtool_stats header{};
  header.cmd = ETHTOOL_GSTATS;
  header.n_stats = kStats;
  std::memcpy(buffer, &header, sizeof(header));
  StartRecording();
  EthtoolSocket socket;
  (void)socket.Call("lo", buffer, "ETHTOOL_GSTATS");
  const Bundle recorded = StopRecording();
  ASSERT_EQ(recorded.ioctls.size(), 1u);
  const auto* fixed = reinterpret_cast<const std::byte*>(&header);
  EXPECT_EQ(recorded.ioctls[0].in, Blob(fixed, fixed + sizeof(header)));
}

// A bundle written before the data area was dropped (every shipped fixture up to now) holds the
// whole buffer: replay matches on the fixed struct, so leftovers in the caller's buffer differ
// from the recorded ones and still get the recorded answers, in order.
TEST_F(TapeTest, ReplayMatchesAnIoctlOnItsFixedStructWhateverTheDataAreaHolds) {
  // struct ethtool_stats followed by its n_stats = 2 values.
  auto stats = [](uint64_t a, uint64_t b) {
    ethtool_stats header{};
    header.cmd = ETHTOOL_GSTATS;
    header.n_stats = 2;
    const uint64_t values[2] = {a, b};
    Blob blob(sizeof(header) + sizeof(values));
    std::memcpy(blob.data(), &header, sizeof(header));
    std::memcpy(blob.data() + sizeof(header), values, sizeof(values));
    return blob;
  };
  Bundle bundle;
  bundle.ioctls.push_back({"veth0", 0, stats(0, 0), stats(10, 20)});
  bundle.ioctls.push_back({"veth0", 0, stats(10, 20), stats(11, 21)});
  StartReplay(bundle);
  Blob call = stats(777, 888);  // another netdev's values
  ASSERT_TRUE(EthtoolIoctl(-1, "veth0", call.data(), "ETHTOOL_GSTATS"));
  EXPECT_EQ(call, stats(10, 20));
  call = stats(5, 5);
  ASSERT_TRUE(EthtoolIoctl(-1, "veth0", call.data(), "ETHTOOL_GSTATS"));
  EXPECT_EQ(call, stats(11, 21));
  call = stats(0, 0);
  ASSERT_TRUE(EthtoolIoctl(-1, "veth0", call.data(), "ETHTOOL_GSTATS"));
  EXPECT_EQ(call, stats(11, 21)) << "used up: the last answer again";
  Blob other_count = stats(0, 0);
  other_count.resize(other_count.size() + sizeof(uint64_t));  // the caller's room for 3 values
  other_count[offsetof(ethtool_stats, n_stats)] = std::byte{3};
  EXPECT_EQ(EthtoolIoctl(-1, "veth0", other_count.data(), "ETHTOOL_GSTATS").error().errnum, ENODATA)
      << "the fixed struct (n_stats) still has to match";
}

// The shipped 6.1 fixture, read by the real ethtool collector in an order the capture never used
// (veth0 right after sim0; the capture read sim1 in between): every read is answered.
TEST_F(TapeTest, AShippedFixtureAnswersTheEthtoolCollectorInAnyNetdevOrder) {
  std::ifstream file(ROCEQOS_FIXTURES_DIR "/replay/6.1/bundle.txt");
  ASSERT_TRUE(file) << ROCEQOS_FIXTURES_DIR;
  std::stringstream text;
  text << file.rdbuf();
  Result<Bundle> bundle = Parse(text.str());
  ASSERT_TRUE(bundle) << bundle.error().message;
  StartReplay(std::move(*bundle));
  std::unique_ptr<EthtoolIo> io = MakeKernelEthtoolIo();
  EthtoolCollector collector(*io, {});
  for (int round = 0; round < 4; ++round) {
    for (const char* netdev : {"sim0", "veth0", "veth0", "sim1", "sim0", "veth0"}) {
      Result<CounterSet> counters = collector.Sample(netdev);
      ASSERT_TRUE(counters) << netdev << " round " << round << ": " << counters.error().message;
      EXPECT_FALSE(counters->values.empty()) << netdev;
    }
  }
}

// --qos.configfs-tos: the capture run made the rdma_cm group, read the ToS and removed the group.
// A replay with the flag reads the recorded ToS and neither writes a marker nor makes a group.
TEST_F(TapeTest, AReplayReadsTheConfigfsTosTheCaptureRunRead) {
  const HostPaths paths;
  const std::string group = paths.configfs + "/rdma_cm/mlx5_0";
  Bundle bundle;
  bundle.fs.push_back({"isdir", paths.configfs + "/rdma_cm", 0, "1"});
  bundle.fs.push_back({"isdir", group, 0, "0"});
  bundle.fs.push_back({"read", group + "/ports/1/default_roce_tos", 0, "106\n"});
  StartReplay(bundle);
  RoceTosState state = HostReader(paths, /*configfs_mkdir=*/true).ReadRoceTos("mlx5_0", 1);
  EXPECT_EQ(state.configfs_tos, Observed<uint8_t>::Ok(106));
  // Without the flag the capture run never made the group: not read, as live.
  state = HostReader(paths, /*configfs_mkdir=*/false).ReadRoceTos("mlx5_0", 1);
  EXPECT_TRUE(state.configfs_tos.absent());
}

TEST_F(TapeTest, NetlinkRequestIsAnsweredFromTheRecordedDatagrams) {
  netlink::Message request(RTM_GETLINK, NLM_F_DUMP);
  ifinfomsg ifi{};
  request.PutHeader(&ifi, sizeof(ifi));
  netlink::Message reply(RTM_NEWLINK, NLM_F_MULTI);
  reply.PutHeader(&ifi, sizeof(ifi));
  reply.PutString(IFLA_IFNAME, "sim0");
  reply.header()->nlmsg_seq = 9;
  reply.header()->nlmsg_pid = 77;
  netlink::Message done(NLMSG_DONE, NLM_F_MULTI);
  const int zero = 0;
  done.PutHeader(&zero, sizeof(zero));
  done.header()->nlmsg_seq = 9;
  done.header()->nlmsg_pid = 77;
  // The recorded request carried another run's sequence number: matching ignores it.
  request.header()->nlmsg_seq = 9;
  Bundle bundle;
  bundle.netlink.push_back({NETLINK_ROUTE,
                            9,
                            77,
                            0,
                            ToBlob(request.bytes()),
                            {ToBlob(reply.bytes()), ToBlob(done.bytes())}});
  bundle.netlink.push_back({NETLINK_RDMA, 0, 0, EPROTONOSUPPORT, {}, {}});
  StartReplay(bundle);
  Result<netlink::Socket> socket = netlink::Socket::Open(NETLINK_ROUTE);
  ASSERT_TRUE(socket) << socket.error().message;
  std::vector<std::string> names;
  Result<void> done_ok = socket->Request(
      request,
      [&](const netlink::NlMessage& msg) {
        names.push_back(ParseLinkReply(msg.body)->name);
        return Result<void>();
      },
      "RTM_GETLINK dump");
  ASSERT_TRUE(done_ok) << done_ok.error().message;
  EXPECT_EQ(names, std::vector<std::string>{"sim0"});
  Result<netlink::Socket> rdma = netlink::Socket::Open(NETLINK_RDMA);
  ASSERT_FALSE(rdma);
  EXPECT_EQ(rdma.error().errnum, EPROTONOSUPPORT);
}

}  // namespace
}  // namespace roceqos::tape
