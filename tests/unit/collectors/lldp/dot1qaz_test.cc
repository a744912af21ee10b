#include "collectors/lldp/dot1qaz.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/dcbnl.h>

#include <array>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace roceqos::lldp {
namespace {

using Buffer = std::vector<std::byte>;

Buffer Hex(std::string_view hex) {
  Buffer out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::byte>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// ETS tables: priorities 3 -> TC 3 and 4 -> TC 4, the rest TC 0; 50/25/25%; all ETS.
constexpr std::string_view kEtsTables =
    "00034000"
    "3200001919000000"
    "0202020202020202";

TEST(Dot1QazEtsConfiguration, DecodesEveryField) {
  // Willing, CBS, reserved bits set (ignored), Max TCs 3.
  Buffer info = Hex(std::string("f3") + std::string(kEtsTables));
  auto ets = DecodeEtsConfiguration(info, "lldp eth0");
  ASSERT_TRUE(ets) << ets.error().message;
  EXPECT_TRUE(ets->willing);
  EXPECT_TRUE(ets->cbs);
  EXPECT_EQ(ets->max_tcs, 3);
  EXPECT_EQ(ets->tables.prio_tc, (std::array<uint8_t, 8>{0, 0, 0, 3, 4, 0, 0, 0}));
  EXPECT_EQ(ets->tables.tc_bandwidth, (std::array<uint8_t, 8>{50, 0, 0, 25, 25, 0, 0, 0}));
  EXPECT_EQ(ets->tables.tc_tsa[3], IEEE_8021QAZ_TSA_ETS);
}

TEST(Dot1QazEtsConfiguration, MaxTcsZeroMeansEight) {
  auto ets = DecodeEtsConfiguration(Hex(std::string("00") + std::string(kEtsTables)), "x");
  ASSERT_TRUE(ets);
  EXPECT_FALSE(ets->willing);
  EXPECT_EQ(ets->max_tcs, 8);
}

TEST(Dot1QazEtsConfiguration, RejectsWrongLengths) {
  Buffer full = Hex(std::string("00") + std::string(kEtsTables));
  for (size_t size : {size_t{0}, size_t{1}, size_t{20}}) {
    auto ets = DecodeEtsConfiguration(std::span(full).first(size), "lldp eth0");
    ASSERT_FALSE(ets) << size;
    EXPECT_NE(ets.error().message.find("lldp eth0: 802.1 ETS Configuration TLV with " +
                                       std::to_string(size) + " bytes of OUI info, expected 21"),
              std::string::npos)
        << ets.error().message;
  }
  full.push_back(std::byte{0});
  EXPECT_FALSE(DecodeEtsConfiguration(full, "x"));
}

TEST(Dot1QazEtsConfiguration, RejectsReservedTcAndBandwidthOver100) {
  auto tc = DecodeEtsConfiguration(Hex("00"
                                       "00094000"
                                       "3200001919000000"
                                       "0202020202020202"),
                                   "x");
  ASSERT_FALSE(tc);
  EXPECT_EQ(tc.error().message, "x: ETS priority 3 assigned to reserved TC value 9");
  auto bw = DecodeEtsConfiguration(Hex("00"
                                       "00034000"
                                       "6500001919000000"
                                       "0202020202020202"),
                                   "x");
  ASSERT_FALSE(bw);
  EXPECT_EQ(bw.error().message, "x: ETS bandwidth of TC 0 is 101%");
}

TEST(Dot1QazEtsConfiguration, KeepsReservedTsaValues) {
  auto ets = DecodeEtsConfiguration(Hex("00"
                                        "00034000"
                                        "3200001919000000"
                                        "0200ff0302020202"),
                                    "x");
  ASSERT_TRUE(ets);
  EXPECT_EQ(ets->tables.tc_tsa, (std::array<uint8_t, 8>{2, 0, 255, 3, 2, 2, 2, 2}));
  EXPECT_EQ(TsaName(ets->tables.tc_tsa[3]), "unknown");
}

TEST(Dot1QazEtsRecommendation, IgnoresTheReservedOctet) {
  auto reco = DecodeEtsRecommendation(Hex(std::string("ff") + std::string(kEtsTables)), "x");
  ASSERT_TRUE(reco) << reco.error().message;
  EXPECT_EQ(reco->tables.prio_tc[4], 4);
  EXPECT_EQ(reco->tables.tc_bandwidth[0], 50);
  EXPECT_FALSE(DecodeEtsRecommendation(Hex(std::string(kEtsTables)), "x"));
}

TEST(Dot1QazPfcConfiguration, DecodesEveryField) {
  auto pfc = DecodePfcConfiguration(Hex("c818"), "x");
  ASSERT_TRUE(pfc) << pfc.error().message;
  EXPECT_TRUE(pfc->willing);
  EXPECT_TRUE(pfc->mbc);
  EXPECT_EQ(pfc->cap, 8);
  EXPECT_EQ(pfc->enabled_mask, 0x18);
  EXPECT_FALSE(pfc->Enabled(2));
  EXPECT_TRUE(pfc->Enabled(3));
  EXPECT_TRUE(pfc->Enabled(4));
}

TEST(Dot1QazPfcConfiguration, RejectsBadLengthsAndCap) {
  EXPECT_FALSE(DecodePfcConfiguration(Hex("08"), "x"));
  EXPECT_FALSE(DecodePfcConfiguration(Hex("081800"), "x"));
  auto cap = DecodePfcConfiguration(Hex("0918"), "x");
  ASSERT_FALSE(cap);
  EXPECT_EQ(cap.error().message, "x: PFC cap 9 exceeds 8 traffic classes");
}

TEST(Dot1QazApplicationPriority, DecodesEntriesAndDscpMap) {
  // DSCP 26 -> 3, DSCP 48 -> 6, UDP 4791 -> 3, Ethertype 0x8915 -> 4, DSCP 26 -> 5 as well.
  auto app = DecodeApplicationPriority(Hex("00"
                                           "65001a"
                                           "c50030"
                                           "6312b7"
                                           "818915"
                                           "a5001a"),
                                       "x");
  ASSERT_TRUE(app) << app.error().message;
  ASSERT_EQ(app->entries.size(), 5u);
  EXPECT_EQ(app->entries[2], (DcbApp{IEEE_8021QAZ_APP_SEL_DGRAM, 3, 4791}));
  EXPECT_EQ(app->entries[3], (DcbApp{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 4, 0x8915}));
  EXPECT_EQ(app->DscpPriorities(26), (std::vector<uint8_t>{3, 5}));
  EXPECT_EQ(app->DscpPriorities(48), (std::vector<uint8_t>{6}));
  EXPECT_TRUE(app->DscpPriorities(0).empty());
}

TEST(Dot1QazApplicationPriority, AcceptsAnEmptyTable) {
  auto app = DecodeApplicationPriority(Hex("00"), "x");
  ASSERT_TRUE(app);
  EXPECT_TRUE(app->entries.empty());
}

TEST(Dot1QazApplicationPriority, RejectsPartialEntries) {
  EXPECT_FALSE(DecodeApplicationPriority({}, "x"));
  auto partial = DecodeApplicationPriority(Hex("0065001a63"), "x");
  ASSERT_FALSE(partial);
  EXPECT_EQ(partial.error().message,
            "x: 802.1 Application Priority TLV with 5 bytes of OUI info, not 1 + a multiple of 3");
}

TEST(Dot1QazApplicationPriority, SkipsReservedSelectorsAndKeepsTheOtherEntries) {
  // Entry 0 DSCP 26 -> 3 and entry 2 DSCP 48 -> 6 are valid; entry 1 has a reserved selector.
  for (std::string_view head : {"60", "66", "67"}) {
    auto app = DecodeApplicationPriority(
        Hex(std::string("0065001a") + std::string(head) + "001a" + "c50030"), "x");
    ASSERT_TRUE(app) << head << ": " << app.error().message;
    EXPECT_EQ(app->DscpPriorities(26), (std::vector<uint8_t>{3})) << head;
    EXPECT_EQ(app->DscpPriorities(48), (std::vector<uint8_t>{6})) << head;
    ASSERT_EQ(app->entries.size(), 2u) << head;
    ASSERT_EQ(app->skipped.size(), 1u) << head;
    EXPECT_EQ(app->skipped[0], fmt::format("x: APP entry 1 has reserved selector {}",
                                           std::stoi(std::string(head), nullptr, 16) & 7));
  }
}

TEST(Dot1QazApplicationPriority, SkipsADscpBeyond63) {
  auto app = DecodeApplicationPriority(Hex("00650040"
                                           "65001a"),
                                       "x");
  ASSERT_TRUE(app) << app.error().message;
  EXPECT_EQ(app->entries, (std::vector<DcbApp>{{IEEE_8021QAZ_APP_SEL_DSCP, 3, 26}}));
  EXPECT_EQ(app->skipped, (std::vector<std::string>{"x: APP entry 0 maps DSCP 64, beyond 63"}));
}

TEST(Dot1QazApplicationPriority, BoundsTheTableAtTheLongestTlv) {
  // 168 entries fill the 507 bytes an OUI info can hold; one more cannot come from a valid TLV.
  std::string hex = "00";
  for (int i = 0; i < 168; ++i) hex += "650000";
  auto full = DecodeApplicationPriority(Hex(hex), "x");
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(full->entries.size(), 168u);
  auto over = DecodeApplicationPriority(Hex(hex + "650000"), "x");
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("508 bytes of OUI info, expected 1-507"), std::string::npos)
      << over.error().message;
}

constexpr std::array<uint8_t, 3> kOui = {0x00, 0x80, 0xC2};

TEST(Dot1QazAddCustomTlv, LeavesOtherOuisAndSubtypesAlone) {
  Dot1QazState state;
  Buffer pfc = Hex("0818");
  constexpr std::array<uint8_t, 3> kDcbxCee = {0x00, 0x1B, 0x21};
  auto other_oui = AddCustomTlv(state, kDcbxCee, 11, pfc, "x");
  ASSERT_TRUE(other_oui);
  EXPECT_FALSE(*other_oui);
  for (int subtype : {1, 8, 13, 255}) {
    auto other_subtype = AddCustomTlv(state, kOui, static_cast<uint8_t>(subtype), pfc, "x");
    ASSERT_TRUE(other_subtype);
    EXPECT_FALSE(*other_subtype);
  }
  auto short_oui = AddCustomTlv(state, std::span(kOui).first(2), 11, pfc, "x");
  ASSERT_TRUE(short_oui);
  EXPECT_FALSE(*short_oui);
  EXPECT_EQ(state, Dot1QazState{});
}

TEST(Dot1QazAddCustomTlv, RejectsASecondTlvOfOneSubtypeAndKeepsTheFirst) {
  Dot1QazState state;
  ASSERT_TRUE(AddCustomTlv(state, kOui, 11, Hex("0818"), "lldp eth0"));
  auto again = AddCustomTlv(state, kOui, 11, Hex("0808"), "lldp eth0");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message,
            "lldp eth0: second 802.1 PFC Configuration TLV from one neighbour");
  EXPECT_EQ(state.pfc_configuration->enabled_mask, 0x18);
  auto bad = AddCustomTlv(state, kOui, 12, Hex("0065001a63"), "lldp eth0");
  ASSERT_FALSE(bad);
  EXPECT_FALSE(state.application_priority);
}

TEST(Dot1QazAddCustomTlv, KeepsTheValidEntriesOfAnAppTlvWithOneBadEntry) {
  Dot1QazState state;
  ASSERT_TRUE(AddCustomTlv(state, kOui, 12,
                           Hex("0067001a"
                               "65001a"),
                           "lldp eth0"));
  ASSERT_TRUE(state.application_priority);
  EXPECT_EQ(state.application_priority->DscpPriorities(26), (std::vector<uint8_t>{3}));
  EXPECT_EQ(state.application_priority->skipped,
            (std::vector<std::string>{"lldp eth0: APP entry 0 has reserved selector 7"}));
}

// The custom TLVs real lldpd 1.0.16 handed over through liblldpctl (provenance in the file).
TEST(Dot1QazAddCustomTlv, DecodesWhatLldpdHandedOver) {
  std::ifstream in(std::string(ROCEQOS_FIXTURES_DIR) + "/lldp/lldpd-1.0.16-custom-tlvs.txt");
  ASSERT_TRUE(in);
  Dot1QazState state;
  int decoded = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string oui_text, info;
    int subtype = 0;
    fields >> oui_text >> subtype >> info;
    Buffer oui_bytes = Hex(oui_text.substr(0, 2) + oui_text.substr(3, 2) + oui_text.substr(6, 2));
    std::array<uint8_t, 3> oui{};
    for (size_t i = 0; i < oui.size(); ++i) oui[i] = static_cast<uint8_t>(oui_bytes[i]);
    auto added = AddCustomTlv(state, oui, static_cast<uint8_t>(subtype), Hex(info), "lldp vB");
    ASSERT_TRUE(added) << line << ": " << added.error().message;
    decoded += *added ? 1 : 0;
  }
  EXPECT_EQ(decoded, 4);
  ASSERT_TRUE(state.pfc_configuration && state.ets_configuration && state.application_priority);
  EXPECT_EQ(state.pfc_configuration->enabled_mask, 0x18);
  EXPECT_EQ(state.pfc_configuration->cap, 8);
  EXPECT_FALSE(state.pfc_configuration->willing);
  EXPECT_EQ(state.ets_configuration->tables.prio_tc,
            (std::array<uint8_t, 8>{0, 0, 0, 3, 4, 0, 0, 0}));
  EXPECT_EQ(state.ets_recommendation->tables, state.ets_configuration->tables);
  EXPECT_EQ(state.application_priority->DscpPriorities(26), (std::vector<uint8_t>{3}));
  EXPECT_EQ(state.application_priority->entries[1], (DcbApp{IEEE_8021QAZ_APP_SEL_DGRAM, 3, 4791}));
}

}  // namespace
}  // namespace roceqos::lldp
