#include "collectors/link_stats.h"

#include <gtest/gtest.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "collectors/ethtool_map.h"
#include "collectors/netlink/genl.h"
#include "tests/unit/support/ethtool_capture.h"

namespace roceqos {
namespace {

constexpr uint16_t kFamily = 0x1c;  // any: the parsers do not look at nlmsg_type
// ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT (6.2+), by its place after ETHTOOL_A_LINKSTATE_EXT_SUBSTATE.
constexpr uint16_t kExtDownCnt = ETHTOOL_A_LINKSTATE_EXT_SUBSTATE + 1;

netlink::NlMessage View(const netlink::Message& msg) {
  netlink::Message& m = const_cast<netlink::Message&>(msg);
  return {*m.header(), m.bytes().subspan(sizeof(nlmsghdr))};
}

netlink::Message Reply(uint8_t cmd, uint16_t header_attr) {
  netlink::Message msg = netlink::GenlRequest(kFamily, cmd, ETHTOOL_GENL_VERSION, 0);
  const size_t header = msg.BeginNest(header_attr);
  msg.PutString(ETHTOOL_A_HEADER_DEV_NAME, "sim0");
  msg.EndNest(header);
  return msg;
}

void PutU64s(netlink::Message& msg, uint16_t type, const std::vector<uint64_t>& values) {
  msg.Put(type, values.data(), values.size() * sizeof(uint64_t));
}

// As net/ethtool/fec.c builds it: active mode, then the stats nest of u64 arrays (total, lanes).
netlink::Message FecReplyWithStats() {
  netlink::Message msg = Reply(ETHTOOL_MSG_FEC_GET_REPLY, ETHTOOL_A_FEC_HEADER);
  msg.PutU8(ETHTOOL_A_FEC_AUTO, 0);
  msg.PutU32(ETHTOOL_A_FEC_ACTIVE, ETHTOOL_LINK_MODE_FEC_RS_BIT);
  const size_t stats = msg.BeginNest(ETHTOOL_A_FEC_STATS);
  PutU64s(msg, ETHTOOL_A_FEC_STAT_CORRECTED, {30, 10, 20});
  PutU64s(msg, ETHTOOL_A_FEC_STAT_UNCORR, {4});
  msg.Put(ETHTOOL_A_FEC_STAT_CORR_BITS, "", 0);  // the driver left it unset
  msg.EndNest(stats);
  return msg;
}

TEST(ParseFecReply, ReadsTheActiveModeAndTheStatArrays) {
  netlink::Message msg = FecReplyWithStats();
  auto fec = ParseFecReply(View(msg));
  ASSERT_TRUE(fec.ok()) << fec.error().message;
  EXPECT_EQ(fec->active_link_mode, ETHTOOL_LINK_MODE_FEC_RS_BIT);
  EXPECT_EQ(fec->corrected_blocks, (std::vector<uint64_t>{30, 10, 20}));
  EXPECT_EQ(fec->uncorrectable_blocks, (std::vector<uint64_t>{4}));
  EXPECT_TRUE(fec->corrected_bits.empty());
  EXPECT_EQ(FecModeName(*fec->active_link_mode), "rs");
}

TEST(ParseFecReply, WithoutStatsOrModeEverythingIsAbsent) {
  netlink::Message msg = Reply(ETHTOOL_MSG_FEC_GET_REPLY, ETHTOOL_A_FEC_HEADER);
  auto fec = ParseFecReply(View(msg));
  ASSERT_TRUE(fec.ok()) << fec.error().message;
  EXPECT_FALSE(fec->active_link_mode);
  EXPECT_TRUE(fec->corrected_blocks.empty());
  EXPECT_TRUE(fec->uncorrectable_blocks.empty());
}

TEST(ParseFecReply, AnArrayThatIsNotWholeU64sIsMalformed) {
  netlink::Message msg = Reply(ETHTOOL_MSG_FEC_GET_REPLY, ETHTOOL_A_FEC_HEADER);
  const size_t stats = msg.BeginNest(ETHTOOL_A_FEC_STATS);
  const uint8_t odd[12] = {};
  msg.Put(ETHTOOL_A_FEC_STAT_UNCORR, odd, sizeof(odd));
  msg.EndNest(stats);
  auto fec = ParseFecReply(View(msg));
  ASSERT_FALSE(fec.ok());
  EXPECT_NE(fec.error().message.find("ETHTOOL_A_FEC_STAT_UNCORR is 12 bytes"), std::string::npos)
      << fec.error().message;
}

TEST(ParseFecReply, AWronglySizedActiveModeIsMalformed) {
  netlink::Message msg = Reply(ETHTOOL_MSG_FEC_GET_REPLY, ETHTOOL_A_FEC_HEADER);
  msg.PutU8(ETHTOOL_A_FEC_ACTIVE, 50);
  EXPECT_FALSE(ParseFecReply(View(msg)).ok());
}

TEST(FecModeName, NamesTheFecLinkModeBits) {
  EXPECT_EQ(FecModeName(ETHTOOL_LINK_MODE_FEC_NONE_BIT), "none");
  EXPECT_EQ(FecModeName(ETHTOOL_LINK_MODE_FEC_BASER_BIT), "baser");
  EXPECT_EQ(FecModeName(ETHTOOL_LINK_MODE_FEC_LLRS_BIT), "llrs");
  EXPECT_EQ(FecModeName(ETHTOOL_LINK_MODE_1000baseT_Full_BIT), "other");
}

// One ETHTOOL_A_STATS_GRP as net/ethtool/stats.c stats_put_stats builds it: id, string set,
// then one ETHTOOL_A_STATS_GRP_STAT nest per statistic holding {stat id: u64}.
void PutGroup(netlink::Message& msg, uint32_t id, uint32_t ss_id,
              const std::map<uint16_t, uint64_t>& stats) {
  const size_t group = msg.BeginNest(ETHTOOL_A_STATS_GRP);
  msg.PutU32(ETHTOOL_A_STATS_GRP_ID, id);
  msg.PutU32(ETHTOOL_A_STATS_GRP_SS_ID, ss_id);
  for (const auto& [type, value] : stats) {
    const size_t stat = msg.BeginNest(ETHTOOL_A_STATS_GRP_STAT);
    msg.PutU64(type, value);
    msg.EndNest(stat);
  }
  msg.EndNest(group);
}

TEST(ParseStdStatsReply, TakesSymbolErrorsFromEthPhyAndFcsErrorsFromEthMac) {
  netlink::Message msg = Reply(ETHTOOL_MSG_STATS_GET_REPLY, ETHTOOL_A_STATS_HEADER);
  PutGroup(msg, ETHTOOL_STATS_ETH_PHY, ETH_SS_STATS_ETH_PHY,
           {{ETHTOOL_A_STATS_ETH_PHY_5_SYM_ERR, 386}});
  PutGroup(msg, ETHTOOL_STATS_ETH_MAC, ETH_SS_STATS_ETH_MAC,
           {{ETHTOOL_A_STATS_ETH_MAC_2_TX_PKT, 7222595},
            {ETHTOOL_A_STATS_ETH_MAC_6_FCS_ERR, 17},
            {ETHTOOL_A_STATS_ETH_MAC_5_RX_PKT, 15005729}});
  // A group that was not asked for (rmon) carries ids that mean other things there.
  PutGroup(msg, ETHTOOL_STATS_RMON, ETH_SS_STATS_RMON, {{0, 999}, {4, 999}});
  auto stats = ParseStdStatsReply(View(msg));
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(stats->symbol_errors, 386u);
  EXPECT_EQ(stats->fcs_errors, 17u);
}

TEST(ParseStdStatsReply, AGroupTheDriverDoesNotFillIsAbsent) {
  netlink::Message msg = Reply(ETHTOOL_MSG_STATS_GET_REPLY, ETHTOOL_A_STATS_HEADER);
  PutGroup(msg, ETHTOOL_STATS_ETH_MAC, ETH_SS_STATS_ETH_MAC,
           {{ETHTOOL_A_STATS_ETH_MAC_2_TX_PKT, 1}});
  auto stats = ParseStdStatsReply(View(msg));
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_FALSE(stats->symbol_errors);
  EXPECT_FALSE(stats->fcs_errors);
}

TEST(ParseStdStatsReply, AStatThatIsNotAU64IsMalformed) {
  netlink::Message msg = Reply(ETHTOOL_MSG_STATS_GET_REPLY, ETHTOOL_A_STATS_HEADER);
  const size_t group = msg.BeginNest(ETHTOOL_A_STATS_GRP);
  msg.PutU32(ETHTOOL_A_STATS_GRP_ID, ETHTOOL_STATS_ETH_PHY);
  const size_t stat = msg.BeginNest(ETHTOOL_A_STATS_GRP_STAT);
  msg.PutU32(ETHTOOL_A_STATS_ETH_PHY_5_SYM_ERR, 5);
  msg.EndNest(stat);
  msg.EndNest(group);
  EXPECT_FALSE(ParseStdStatsReply(View(msg)).ok());
}

TEST(ParseStdStatsReply, AGroupWithoutItsIdIsMalformed) {
  netlink::Message msg = Reply(ETHTOOL_MSG_STATS_GET_REPLY, ETHTOOL_A_STATS_HEADER);
  const size_t group = msg.BeginNest(ETHTOOL_A_STATS_GRP);
  msg.PutU32(ETHTOOL_A_STATS_GRP_SS_ID, ETH_SS_STATS_ETH_PHY);
  msg.EndNest(group);
  auto stats = ParseStdStatsReply(View(msg));
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.error().message.find("ETHTOOL_A_STATS_GRP_ID"), std::string::npos)
      << stats.error().message;
}

TEST(ParseLinkStateReply, ReadsLinkAndTheDownCount) {
  netlink::Message msg = Reply(ETHTOOL_MSG_LINKSTATE_GET_REPLY, ETHTOOL_A_LINKSTATE_HEADER);
  msg.PutU8(ETHTOOL_A_LINKSTATE_LINK, 1);
  msg.PutU8(ETHTOOL_A_LINKSTATE_EXT_STATE, 0);
  msg.PutU32(kExtDownCnt, 5);
  auto state = ParseLinkStateReply(View(msg));
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->link_up, true);
  EXPECT_EQ(state->link_down_events, 5u);
}

TEST(ParseLinkStateReply, BeforeLinux63ThereIsNoDownCount) {
  netlink::Message msg = Reply(ETHTOOL_MSG_LINKSTATE_GET_REPLY, ETHTOOL_A_LINKSTATE_HEADER);
  msg.PutU8(ETHTOOL_A_LINKSTATE_LINK, 0);
  auto state = ParseLinkStateReply(View(msg));
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->link_up, false);
  EXPECT_FALSE(state->link_down_events);
}

TEST(ParseLinkStateReply, AWronglySizedDownCountIsMalformed) {
  netlink::Message msg = Reply(ETHTOOL_MSG_LINKSTATE_GET_REPLY, ETHTOOL_A_LINKSTATE_HEADER);
  msg.PutU8(kExtDownCnt, 5);
  auto state = ParseLinkStateReply(View(msg));
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.error().message.find("ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT"), std::string::npos)
      << state.error().message;
}

// Answers each message from a table; an unset one answers EOPNOTSUPP like a 5.10 kernel.
class FakeLinkIo : public LinkStatsIo {
 public:
  Result<FecReply> ReadFec(const std::string&) override { return Answer(fec); }
  Result<StdStatsReply> ReadStdStats(const std::string&) override { return Answer(std_stats); }
  Result<LinkStateReply> ReadLinkState(const std::string&) override { return Answer(state); }

  std::optional<Result<FecReply>> fec;
  std::optional<Result<StdStatsReply>> std_stats;
  std::optional<Result<LinkStateReply>> state;

 private:
  template <typename T>
  static Result<T> Answer(const std::optional<Result<T>>& answer) {
    if (!answer) return MakeError(EOPNOTSUPP, "Operation not supported");
    return *answer;
  }
};

TEST(ReadLinkNetlinkStats, AMessageTheKernelLacksIsAbsentNotFailed) {
  FakeLinkIo io;
  io.state = LinkStateReply{.link_up = true};
  auto read = ReadLinkNetlinkStats(io, "sim0");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_FALSE(read->fec);
  EXPECT_FALSE(read->std_stats);
  ASSERT_TRUE(read->state);
  EXPECT_EQ(read->state->link_up, true);
}

TEST(ReadLinkNetlinkStats, AVanishedNetdevFailsTheRead) {
  FakeLinkIo io;
  io.fec = FecReply{};
  io.std_stats = Result<StdStatsReply>(MakeError(ENODEV, "No such device"));
  auto read = ReadLinkNetlinkStats(io, "sim0");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().errnum, ENODEV);
}

// The real kernel: loopback answers LINKSTATE_GET (carrier on) and has no FEC; a netdev that does
// not exist is ENODEV.
TEST(LinkStatsKernel, LoopbackHasALinkStateAndMissingDeviceIsEnodev) {
  auto io = MakeKernelLinkStatsIo();
  auto lo = ReadLinkNetlinkStats(*io, "lo");
  ASSERT_TRUE(lo.ok()) << lo.error().message;
  EXPECT_FALSE(lo->fec);
  if (lo->state) {
    EXPECT_EQ(lo->state->link_up, true);
  }
  // The request shapes are the kernel's: a malformed STATS_GET group selection or a refused
  // header flag would be EINVAL here, never absence.
  auto stats = io->ReadStdStats("lo");
  EXPECT_TRUE(stats.ok() || stats.error().NotSupported()) << stats.error().message;
  auto missing = ReadLinkNetlinkStats(*io, "roceqos-nodev");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().errnum, ENODEV) << missing.error().message;
}

std::vector<std::byte> ReadSeed(const std::string& name) {
  std::ifstream in(std::string(ROCEQOS_SOURCE_DIR) + "/fuzz/corpus/link_stats_fuzz/" + name,
                   std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

// The fuzz target's seeds (fuzz/make_seeds.py) are well-formed replies, so fuzzing starts from
// the parsers' success paths.
TEST(LinkStatsFuzzSeeds, ParseAsTheRepliesTheyStandFor) {
  int messages = 0;
  for (const char* seed : {"seed-fec", "seed-stats", "seed-linkstate"}) {
    const std::vector<std::byte> bytes = ReadSeed(seed);
    ASSERT_FALSE(bytes.empty()) << seed;
    auto walked = netlink::ForEachMessage(bytes, seed, [&](const netlink::NlMessage& msg) {
      ++messages;
      if (std::string_view(seed) == "seed-fec") {
        auto fec = ParseFecReply(msg);
        EXPECT_TRUE(fec.ok() && fec->uncorrectable_blocks == std::vector<uint64_t>({4, 1, 3}));
      } else if (std::string_view(seed) == "seed-stats") {
        auto stats = ParseStdStatsReply(msg);
        EXPECT_TRUE(stats.ok() && stats->symbol_errors == 386u && stats->fcs_errors == 17u);
      } else {
        auto state = ParseLinkStateReply(msg);
        EXPECT_TRUE(state.ok() && state->link_down_events == 5u);
      }
      return Result<void>{};
    });
    EXPECT_TRUE(walked.ok()) << seed;
  }
  EXPECT_EQ(messages, 3);
}

std::vector<std::string> CaptureNames(const char* prefix) {
  const std::string text = ::roceqos::testing::ReadCapture(prefix);
  EXPECT_FALSE(text.empty()) << prefix;
  auto blocks = ::roceqos::testing::ParseEthtoolStats(::roceqos::testing::CaptureBody(text));
  EXPECT_EQ(blocks.size(), 1u);
  return blocks.empty() ? std::vector<std::string>{} : ::roceqos::testing::Names(blocks[0]);
}

std::string At(const std::vector<std::string>& names, std::optional<uint32_t> at) {
  return at && *at < names.size() ? names[*at] : "(absent)";
}

// Capture 16: a 100G mlx5 port (MOFED 5.x) with the phy statistical group and four lanes.
TEST(MapMlx5LinkNames, Capture16HasEveryLinkNameButRxBits) {
  const std::vector<std::string> names = CaptureNames("16_");
  const LinkEthtoolNames link = MapMlx5LinkNames(names);
  EXPECT_EQ(At(names, link.symbol_errors), "rx_symbol_err_phy");
  EXPECT_EQ(At(names, link.pcs_symbol_errors), "rx_pcs_symbol_err_phy");
  EXPECT_EQ(At(names, link.fcs_errors), "rx_crc_errors_phy");
  EXPECT_EQ(At(names, link.link_down_events), "link_down_events_phy");
  EXPECT_EQ(At(names, link.corrected_bits), "rx_corrected_bits_phy");
  EXPECT_FALSE(link.received_bits);  // rx_bits_phy is newer than this driver: no BER here
  ASSERT_EQ(link.lane_corrected_bits.size(), 4u);
  for (size_t lane = 0; lane < 4; ++lane) {
    EXPECT_EQ(names[link.lane_corrected_bits[lane]],
              "rx_err_lane_" + std::to_string(lane) + "_phy");
  }
}

// Capture 24: ConnectX-4 Lx on kernel 4.15: the same names without per-lane counters.
TEST(MapMlx5LinkNames, Capture24Kernel415HasNoLanes) {
  const std::vector<std::string> names = CaptureNames("24_");
  const LinkEthtoolNames link = MapMlx5LinkNames(names);
  EXPECT_EQ(At(names, link.symbol_errors), "rx_symbol_err_phy");
  EXPECT_EQ(At(names, link.fcs_errors), "rx_crc_errors_phy");
  EXPECT_EQ(At(names, link.link_down_events), "link_down_events_phy");
  EXPECT_EQ(At(names, link.corrected_bits), "rx_corrected_bits_phy");
  EXPECT_TRUE(link.lane_corrected_bits.empty());
}

TEST(MapMlx5LinkNames, ExactNamesFirstWinsAndLanesStopAtAGap) {
  const LinkEthtoolNames link =
      MapMlx5LinkNames({"rx_bits_phy", "rx_bits_phy_x", "rx_err_lane_0_phy", "rx_err_lane_2_phy",
                        "rx_err_lane_10_phy", "rx_bits_phy", "xrx_crc_errors_phy"});
  EXPECT_EQ(link.received_bits, 0u);
  EXPECT_EQ(link.lane_corrected_bits, (std::vector<uint32_t>{2}));
  EXPECT_FALSE(link.fcs_errors);
  EXPECT_EQ(MapMlx5LinkNames({}), LinkEthtoolNames{});
}

}  // namespace
}  // namespace roceqos
