#include "collectors/dcb.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/netlink/socket.h"

namespace roceqos {
namespace {

// ---------------------------------------------------------------------------------------------
// What `mlnx_qos -i <if>` printed in a real capture, read back into the values an IEEE_GET reply
// carries. mlnx_qos itself fills its output from exactly these attributes when the old MOFED
// sysfs is absent (docs/kernel-interfaces.md §7.6), so the capture fixes what the reply held.

struct MlnxQosOutput {
  bool dcbx_host = false;        // "DCBX mode: OS controlled" vs "Firmware controlled"
  bool trust_dscp = false;       // "Priority trust state:"
  std::map<int, int> dscp_prio;  // "prio:P dscp:..."
  std::optional<std::vector<uint32_t>> buffer_sizes;  // "Receive buffer size (bytes):"
  std::optional<uint32_t> max_buffer;                 // "max_buffer_size=N"
  int cable_len = 0;
  uint8_t pfc_mask = 0;
  std::optional<std::array<uint8_t, 8>> prio_buffer;           // PFC "buffer" row
  std::map<int, std::string> tc_tsa;                           // "tc: N ... tsa: X"
  std::map<int, int> tc_bw;                                    // ", bw: Y%"
  std::array<int, 8> prio_tc{-1, -1, -1, -1, -1, -1, -1, -1};  // "priority: P" under "tc: N"
};

std::string ReadCapture(const std::string& name) {
  std::ifstream in(std::string(ROCEQOS_CAPTURES_DIR) + "/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Parses the `index`-th block starting at "DCBX mode:" of a capture file.
MlnxQosOutput ParseMlnxQos(const std::string& text, int index) {
  MlnxQosOutput out;
  std::istringstream in(text);
  std::string line;
  int block = -1;
  int current_tc = -1;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("DCBX mode:", 0) == 0) {  // not the "# ..." provenance header
      ++block;
      if (block > index) break;
      out.dcbx_host = line.find("OS controlled") != std::string::npos;
      continue;
    }
    if (block == index && line.rfind("# ----", 0) == 0) break;  // the capture's next section
    if (block != index) continue;
    if (std::regex_search(line, m, std::regex(R"(Priority trust state: (\w+))"))) {
      out.trust_dscp = m[1] == "dscp";
    } else if (std::regex_search(line, m, std::regex(R"(prio:(\d) dscp:([\d,]+))"))) {
      std::string list = m[2];
      std::regex num(R"(\d+)");
      for (auto it = std::sregex_iterator(list.begin(), list.end(), num);
           it != std::sregex_iterator(); ++it)
        out.dscp_prio[std::stoi(it->str())] = std::stoi(m[1]);
    } else if (std::regex_search(line, m, std::regex(R"(Receive buffer size \(bytes\): (.*))"))) {
      std::string rest = m[1];
      std::vector<uint32_t> sizes;
      std::regex field(R"((max_buffer_size=)?(\d+))");
      for (auto it = std::sregex_iterator(rest.begin(), rest.end(), field);
           it != std::sregex_iterator(); ++it) {
        if ((*it)[1].matched)
          out.max_buffer = static_cast<uint32_t>(std::stoul((*it)[2]));
        else
          sizes.push_back(static_cast<uint32_t>(std::stoul((*it)[2])));
      }
      out.buffer_sizes = sizes;
    } else if (std::regex_search(line, m, std::regex(R"(Cable len: (\d+))"))) {
      out.cable_len = std::stoi(m[1]);
    } else if (std::regex_search(line, m, std::regex(R"(^\s*enabled((\s+[01]){8}))"))) {
      std::istringstream bits(m[1].str());
      for (int p = 0, b; p < 8 && bits >> b; ++p)
        if (b) out.pfc_mask = static_cast<uint8_t>(out.pfc_mask | (1 << p));
    } else if (std::regex_search(line, m, std::regex(R"(^\s*buffer((\s+\d){8}))"))) {
      std::istringstream vals(m[1].str());
      std::array<uint8_t, 8> pb{};
      for (int p = 0, b; p < 8 && vals >> b; ++p) pb[p] = static_cast<uint8_t>(b);
      out.prio_buffer = pb;
    } else if (std::regex_search(
                   line, m, std::regex(R"(tc: (\d) ratelimit: \w+, tsa: (\w+)(, bw: (\d+)%)?)"))) {
      current_tc = std::stoi(m[1]);
      out.tc_tsa[current_tc] = m[2];
      if (m[4].matched) out.tc_bw[current_tc] = std::stoi(m[4]);
    } else if (std::regex_search(line, m, std::regex(R"(^\s*priority:\s+(\d))")) &&
               current_tc >= 0) {
      out.prio_tc[std::stoi(m[1])] = current_tc;
    }
  }
  EXPECT_GE(block, index) << "capture has no block " << index;
  return out;
}

uint8_t TsaValue(const std::string& name) {
  if (name == "strict") return IEEE_8021QAZ_TSA_STRICT;
  if (name == "ets") return IEEE_8021QAZ_TSA_ETS;
  if (name == "vendor") return IEEE_8021QAZ_TSA_VENDOR;
  ADD_FAILURE() << "unknown tsa " << name;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// A DCB_CMD_IEEE_GET reply, in the attribute order of dcbnl_ieee_fill().

struct ReplySpec {
  std::optional<ieee_ets> ets;
  std::optional<ieee_maxrate> maxrate;
  std::optional<ieee_pfc> pfc;
  std::optional<dcbnl_buffer> buffer;
  std::vector<dcb_app> apps;
  bool rewr_table = true;  // always present on v6.3+ kernels; must be ignored
  std::optional<std::vector<uint8_t>> trust;
  std::optional<uint8_t> dcbx;
};

std::vector<std::byte> BuildMessage(const ReplySpec& spec,
                                    const std::string& ifname = "ens1f0np0") {
  netlink::Message msg(RTM_GETDCB, 0);
  dcbmsg header{AF_UNSPEC, DCB_CMD_IEEE_GET, 0};
  msg.PutHeader(&header, sizeof header);
  msg.PutString(DCB_ATTR_IFNAME, ifname);
  size_t ieee = msg.BeginNest(DCB_ATTR_IEEE);
  if (spec.ets) msg.Put(DCB_ATTR_IEEE_ETS, &*spec.ets, sizeof(ieee_ets));
  if (spec.maxrate) msg.Put(DCB_ATTR_IEEE_MAXRATE, &*spec.maxrate, sizeof(ieee_maxrate));
  if (spec.pfc) msg.Put(DCB_ATTR_IEEE_PFC, &*spec.pfc, sizeof(ieee_pfc));
  if (spec.buffer) msg.Put(DCB_ATTR_DCB_BUFFER, &*spec.buffer, sizeof(dcbnl_buffer));
  size_t table = msg.BeginNest(DCB_ATTR_IEEE_APP_TABLE);
  for (const auto& app : spec.apps) msg.Put(DCB_ATTR_IEEE_APP, &app, sizeof app);
  msg.EndNest(table);
  if (spec.rewr_table) msg.EndNest(msg.BeginNest(DCB_ATTR_DCB_REWR_TABLE));
  if (spec.trust) {
    size_t t = msg.BeginNest(DCB_ATTR_DCB_APP_TRUST_TABLE);
    for (uint8_t sel : *spec.trust)
      msg.PutU8(sel == DCB_APP_SEL_PCP ? DCB_ATTR_DCB_APP : DCB_ATTR_IEEE_APP, sel);
    msg.EndNest(t);
  }
  msg.EndNest(ieee);
  if (spec.dcbx) msg.PutU8(DCB_ATTR_DCBX, *spec.dcbx);
  auto bytes = msg.bytes();
  return {bytes.begin(), bytes.end()};
}

// The bytes after nlmsghdr + dcbmsg, as DcbReader::Read hands them to the parser.
std::vector<std::byte> PayloadOf(const std::vector<std::byte>& message) {
  size_t skip = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg));
  return {message.begin() + static_cast<long>(skip), message.end()};
}

std::vector<std::byte> BuildPayload(const ReplySpec& spec) { return PayloadOf(BuildMessage(spec)); }

ReplySpec SpecFromCapture(const MlnxQosOutput& q) {
  ReplySpec spec;
  ieee_ets ets{};
  ets.ets_cap = 8;
  for (int tc = 0; tc < 8; ++tc) {
    auto tsa = q.tc_tsa.find(tc);
    ets.tc_tsa[tc] = tsa == q.tc_tsa.end() ? IEEE_8021QAZ_TSA_STRICT : TsaValue(tsa->second);
    auto bw = q.tc_bw.find(tc);
    ets.tc_tx_bw[tc] = bw == q.tc_bw.end() ? 0 : static_cast<uint8_t>(bw->second);
  }
  for (int p = 0; p < 8; ++p) ets.prio_tc[p] = static_cast<uint8_t>(q.prio_tc[p]);
  spec.ets = ets;
  spec.maxrate = ieee_maxrate{};  // "ratelimit: unlimited" everywhere: 0 = no limit
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = q.pfc_mask;
  pfc.delay = static_cast<uint16_t>(q.cable_len);
  pfc.requests[3] = 12345;  // stale pause counters must not leak into the state
  spec.pfc = pfc;
  if (q.buffer_sizes) {
    dcbnl_buffer buf{};
    for (size_t i = 0; i < q.buffer_sizes->size() && i < 8; ++i)
      buf.buffer_size[i] = (*q.buffer_sizes)[i];
    if (q.prio_buffer)
      for (int p = 0; p < 8; ++p) buf.prio2buffer[p] = (*q.prio_buffer)[p];
    buf.total_size = q.max_buffer.value_or(0);
    spec.buffer = buf;
  }
  if (q.trust_dscp)
    for (const auto& [dscp, prio] : q.dscp_prio)
      spec.apps.push_back(dcb_app{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(prio),
                                  static_cast<uint16_t>(dscp)});
  spec.dcbx = static_cast<uint8_t>(DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE |
                                   (q.dcbx_host ? DCB_CAP_DCBX_HOST : 0));
  return spec;
}

struct CaptureCase {
  const char* file;
  int block;
};

class DcbCaptureTest : public testing::TestWithParam<CaptureCase> {};

// Every mlnx_qos capture: the reply built from it parses to the same values mlnx_qos printed.
TEST_P(DcbCaptureTest, ParsedStateMatchesWhatMlnxQosPrinted) {
  MlnxQosOutput q = ParseMlnxQos(ReadCapture(GetParam().file), GetParam().block);
  // The capture reader itself found a complete output: every priority under some TC.
  for (int p = 0; p < 8; ++p) ASSERT_GE(q.prio_tc[p], 0) << "prio " << p;
  ASSERT_FALSE(q.tc_tsa.empty());
  auto payload = BuildPayload(SpecFromCapture(q));
  auto state = ParseIeeeGetPayload(payload, "ens1f0np0");
  ASSERT_TRUE(state.ok()) << state.error().message;

  EXPECT_EQ(state->Trust(), q.trust_dscp ? TrustMode::kDscp : TrustMode::kPcp);
  ASSERT_TRUE(state->pfc);
  EXPECT_EQ(state->pfc->enabled_mask, q.pfc_mask);
  EXPECT_EQ(state->pfc->delay, q.cable_len);
  ASSERT_TRUE(state->dcbx);
  EXPECT_EQ(DcbxModeName(*state->dcbx), q.dcbx_host ? "host" : "firmware");
  ASSERT_TRUE(state->ets);
  for (int p = 0; p < 8; ++p) EXPECT_EQ(state->ets->prio_tc[p], q.prio_tc[p]) << "prio " << p;
  for (const auto& [tc, tsa] : q.tc_tsa) EXPECT_EQ(TsaName(state->ets->tc_tsa[tc]), tsa) << tc;
  for (const auto& [tc, bw] : q.tc_bw) EXPECT_EQ(state->ets->tc_tx_bw[tc], bw) << tc;
  if (q.trust_dscp) {
    ASSERT_EQ(q.dscp_prio.size(), 64u);
    for (const auto& [dscp, prio] : q.dscp_prio)
      EXPECT_EQ(state->DscpPriorities(static_cast<uint8_t>(dscp)),
                std::vector<uint8_t>{static_cast<uint8_t>(prio)})
          << "dscp " << dscp;
  } else {
    EXPECT_TRUE(state->apps.empty());
  }
  EXPECT_EQ(state->buffer.has_value(), q.buffer_sizes.has_value());
  if (q.buffer_sizes) {
    for (size_t i = 0; i < q.buffer_sizes->size() && i < 8; ++i)
      EXPECT_EQ(state->buffer->size[i], (*q.buffer_sizes)[i]);
    if (q.prio_buffer) {
      EXPECT_EQ(state->buffer->prio_buffer, *q.prio_buffer);
    }
  }
  ASSERT_TRUE(state->maxrate_kbps);
  EXPECT_EQ(*state->maxrate_kbps, (std::array<uint64_t, 8>{}));
  EXPECT_FALSE(state->app_trust);  // mlx5 has no apptrust
}

INSTANTIATE_TEST_SUITE_P(
    RealCaptures, DcbCaptureTest,
    testing::Values(
        CaptureCase{"04_mellanox_community_DOC-2792_mlnx_qos_eth2_MOFED4.2.txt", 0},
        CaptureCase{"07_att_netarbiter_mlnx_qos_trust_dscp_pfc3_cma_roce_tos.txt", 1},
        CaptureCase{"08_blog_cx5_sn2700_nfsordma_mlnx_qos_fw_dcbx_show_gids.txt", 0},
        CaptureCase{"20_3fs_perf_doc_cx7_mofed23.10_mlnx_qos_custom_dscp_buffers_ets.txt", 0},
        CaptureCase{"21_notes_cx5_centos12_mlnx_qos_pcp_to_dscp_traffic_class_show_gids19.txt", 0},
        CaptureCase{"21_notes_cx5_centos12_mlnx_qos_pcp_to_dscp_traffic_class_show_gids19.txt", 1},
        CaptureCase{"26_mlnx_tools_commitmsg_mlnx_qos_outputs_tc_order_bug_max_buffer_size.txt", 0},
        CaptureCase{"26_mlnx_tools_commitmsg_mlnx_qos_outputs_tc_order_bug_max_buffer_size.txt",
                    1}));

// Spot checks with literal values, so a mistake shared by the capture reader and the reply
// builder above cannot hide.
TEST(DcbParse, Capture20CustomDscpMapBuffersAndStrictTcs) {
  MlnxQosOutput q = ParseMlnxQos(
      ReadCapture("20_3fs_perf_doc_cx7_mofed23.10_mlnx_qos_custom_dscp_buffers_ets.txt"), 0);
  auto state = ParseIeeeGetPayload(BuildPayload(SpecFromCapture(q)), "ens4np0");
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->pfc->enabled_mask, 0x20);  // priority 5 only
  EXPECT_EQ(state->pfc->delay, 30);           // --cable_len=30
  EXPECT_EQ(state->DscpPriorities(40), std::vector<uint8_t>{5});
  EXPECT_EQ(state->DscpPriorities(48), std::vector<uint8_t>{6});
  EXPECT_EQ(state->DscpPriorities(26), std::vector<uint8_t>{3});
  EXPECT_EQ(state->buffer->size[0], 19872u);
  EXPECT_EQ(state->buffer->size[1], 220896u);
  EXPECT_EQ(state->buffer->total_size, 4151520u);
  EXPECT_EQ(state->buffer->prio_buffer, (std::array<uint8_t, 8>{0, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(state->ets->tc_tsa[2], IEEE_8021QAZ_TSA_ETS);
  EXPECT_EQ(state->ets->tc_tx_bw[2], 80);
  EXPECT_EQ(state->ets->tc_tsa[4], IEEE_8021QAZ_TSA_STRICT);
  EXPECT_EQ(state->ets->prio_tc, (std::array<uint8_t, 8>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(state->apps.size(), 64u);
}

TEST(DcbParse, Capture26OutOfOrderTcsAndDefaultMlx5PrioTc) {
  MlnxQosOutput q = ParseMlnxQos(
      ReadCapture("26_mlnx_tools_commitmsg_mlnx_qos_outputs_tc_order_bug_max_buffer_size.txt"), 0);
  auto state = ParseIeeeGetPayload(BuildPayload(SpecFromCapture(q)), "eth2");
  ASSERT_TRUE(state.ok()) << state.error().message;
  // mlx5e_ets_init: prio0 -> tc1, prio1 -> tc0, identity otherwise.
  EXPECT_EQ(state->ets->prio_tc, (std::array<uint8_t, 8>{1, 0, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(state->pfc->enabled_mask, 0x3e);  // priorities 1-5
  EXPECT_EQ(state->Trust(), TrustMode::kDscp);
}

TEST(DcbParse, Capture08FirmwareDcbxAndTwoBuffers) {
  MlnxQosOutput q =
      ParseMlnxQos(ReadCapture("08_blog_cx5_sn2700_nfsordma_mlnx_qos_fw_dcbx_show_gids.txt"), 0);
  auto state = ParseIeeeGetPayload(BuildPayload(SpecFromCapture(q)), "mce0");
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(DcbxModeName(*state->dcbx), "firmware");
  EXPECT_EQ(state->buffer->size[0], 130944u);
  EXPECT_EQ(state->buffer->size[1], 130944u);
  EXPECT_EQ(state->buffer->total_size, 262016u);
  EXPECT_EQ(state->ets->prio_tc, (std::array<uint8_t, 8>{0, 0, 0, 3, 0, 0, 6, 0}));
  EXPECT_EQ(state->ets->tc_tsa[6], IEEE_8021QAZ_TSA_VENDOR);
}

TEST(DcbParse, PfcMaxrateAndUnalignedU64sAreCopiedExactly) {
  ReplySpec spec;
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = 0x88;
  pfc.mbc = 1;
  pfc.delay = 0xBEEF;
  spec.pfc = pfc;
  ieee_maxrate rate{};
  for (int tc = 0; tc < 8; ++tc) rate.tc_maxrate[tc] = 25000000ULL * (tc + 1) + 0x100000000ULL;
  spec.maxrate = rate;
  auto payload = BuildPayload(spec);
  // Shift by one byte so no struct can be read in place by accident.
  std::vector<std::byte> shifted(payload.size() + 1);
  std::copy(payload.begin(), payload.end(), shifted.begin() + 1);
  auto state = ParseIeeeGetPayload(netlink::Bytes(shifted).subspan(1), "sim0");
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->pfc->enabled_mask, 0x88);
  EXPECT_EQ(state->pfc->mbc, 1);
  EXPECT_EQ(state->pfc->delay, 0xBEEF);
  EXPECT_EQ((*state->maxrate_kbps)[7], 200000000ULL + 0x100000000ULL);
  EXPECT_FALSE(state->ets);
  EXPECT_FALSE(state->buffer);
  EXPECT_FALSE(state->dcbx);
}

TEST(DcbParse, AppTrustTableDecidesTrustWhenPresent) {
  ReplySpec spec;
  spec.apps = {{IEEE_8021QAZ_APP_SEL_DSCP, 3, 26}};
  spec.trust = std::vector<uint8_t>{DCB_APP_SEL_PCP};
  auto state = ParseIeeeGetPayload(BuildPayload(spec), "swp1");
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->app_trust, (std::vector<uint8_t>{DCB_APP_SEL_PCP}));
  EXPECT_EQ(state->Trust(), TrustMode::kPcp);  // a DSCP entry alone does not decide here

  spec.trust = std::vector<uint8_t>{IEEE_8021QAZ_APP_SEL_DSCP, DCB_APP_SEL_PCP};
  state = ParseIeeeGetPayload(BuildPayload(spec), "swp1");
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->Trust(), TrustMode::kDscp);
}

TEST(DcbParse, SeveralPrioritiesForOneDscpAreAllKept) {
  ReplySpec spec;
  spec.apps = {{IEEE_8021QAZ_APP_SEL_DSCP, 5, 26},
               {IEEE_8021QAZ_APP_SEL_DSCP, 3, 26},
               {IEEE_8021QAZ_APP_SEL_ETHERTYPE, 4, 0x8906}};
  auto state = ParseIeeeGetPayload(BuildPayload(spec), "sim1");
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->DscpPriorities(26), (std::vector<uint8_t>{3, 5}));
  EXPECT_EQ(state->apps.size(), 3u);
}

// ---------------------------------------------------------------------------------------------
// Malformed replies: an Error naming the device, never a crash or a half-filled state.

std::vector<std::byte> WithAttr(uint16_t type, const void* data, size_t len) {
  netlink::Message msg(RTM_GETDCB, 0);
  dcbmsg header{AF_UNSPEC, DCB_CMD_IEEE_GET, 0};
  msg.PutHeader(&header, sizeof header);
  msg.PutString(DCB_ATTR_IFNAME, "sim0");
  size_t ieee = msg.BeginNest(DCB_ATTR_IEEE);
  msg.Put(type, data, len);
  msg.EndNest(ieee);
  auto bytes = msg.bytes();
  return PayloadOf({bytes.begin(), bytes.end()});
}

TEST(DcbParseMalformed, WrongStructSizesAreRejected) {
  std::vector<uint8_t> blob(200, 0);
  struct Case {
    uint16_t type;
    size_t len;
  };
  for (Case c : {Case{DCB_ATTR_IEEE_ETS, 58}, Case{DCB_ATTR_IEEE_ETS, 60},
                 Case{DCB_ATTR_IEEE_PFC, 135}, Case{DCB_ATTR_IEEE_PFC, 144},
                 Case{DCB_ATTR_DCB_BUFFER, 40}, Case{DCB_ATTR_IEEE_MAXRATE, 56}}) {
    auto state = ParseIeeeGetPayload(WithAttr(c.type, blob.data(), c.len), "sim0");
    ASSERT_FALSE(state.ok()) << "type " << c.type << " len " << c.len;
    EXPECT_NE(state.error().message.find("sim0"), std::string::npos) << state.error().message;
  }
}

TEST(DcbParseMalformed, AppEntryOfWrongSizeOrTypeIsRejected) {
  netlink::Message msg(RTM_GETDCB, 0);
  dcbmsg header{AF_UNSPEC, DCB_CMD_IEEE_GET, 0};
  msg.PutHeader(&header, sizeof header);
  size_t ieee = msg.BeginNest(DCB_ATTR_IEEE);
  size_t table = msg.BeginNest(DCB_ATTR_IEEE_APP_TABLE);
  uint8_t three[3] = {5, 3, 26};
  msg.Put(DCB_ATTR_IEEE_APP, three, sizeof three);
  msg.EndNest(table);
  msg.EndNest(ieee);
  auto bytes = msg.bytes();
  auto state = ParseIeeeGetPayload(PayloadOf({bytes.begin(), bytes.end()}), "sim0");
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.error().message.find("APP entry of 3 bytes"), std::string::npos)
      << state.error().message;

  dcb_app app{IEEE_8021QAZ_APP_SEL_DSCP, 3, 26};
  netlink::Message msg2(RTM_GETDCB, 0);
  msg2.PutHeader(&header, sizeof header);
  ieee = msg2.BeginNest(DCB_ATTR_IEEE);
  table = msg2.BeginNest(DCB_ATTR_IEEE_APP_TABLE);
  msg2.Put(7, &app, sizeof app);
  msg2.EndNest(table);
  msg2.EndNest(ieee);
  bytes = msg2.bytes();
  state = ParseIeeeGetPayload(PayloadOf({bytes.begin(), bytes.end()}), "sim0");
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.error().message.find("unexpected attribute type 7"), std::string::npos);
}

TEST(DcbParseMalformed, PrioTcBeyondEightTcsIsRejected) {
  ieee_ets ets{};
  ets.prio_tc[3] = 9;
  auto state = ParseIeeeGetPayload(WithAttr(DCB_ATTR_IEEE_ETS, &ets, sizeof ets), "sim0");
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.error().message.find("prio_tc[3] = 9"), std::string::npos);
}

TEST(DcbParseMalformed, MissingIeeeNestIsRejected) {
  netlink::Message msg(RTM_GETDCB, 0);
  dcbmsg header{AF_UNSPEC, DCB_CMD_IEEE_GET, 0};
  msg.PutHeader(&header, sizeof header);
  msg.PutString(DCB_ATTR_IFNAME, "sim0");
  msg.PutU8(DCB_ATTR_DCBX, 8);
  auto bytes = msg.bytes();
  EXPECT_FALSE(ParseIeeeGetPayload(PayloadOf({bytes.begin(), bytes.end()}), "sim0").ok());
}

// Cutting a full reply anywhere inside the IEEE nest must fail; a cut exactly between the nest
// and DCB_ATTR_DCBX is a valid shorter reply without DCBX.
TEST(DcbParseMalformed, EveryTruncationInsideTheNestFails) {
  MlnxQosOutput q = ParseMlnxQos(
      ReadCapture("20_3fs_perf_doc_cx7_mofed23.10_mlnx_qos_custom_dscp_buffers_ets.txt"), 0);
  auto full = BuildPayload(SpecFromCapture(q));
  ASSERT_TRUE(ParseIeeeGetPayload(full, "x").ok());
  const size_t dcbx_attr = NLA_ALIGN(NLA_HDRLEN + 1);
  const size_t nest_end = full.size() - dcbx_attr;
  for (size_t len = 0; len < full.size(); ++len) {
    auto state = ParseIeeeGetPayload(netlink::Bytes(full).first(len), "x");
    if (len == nest_end) {
      ASSERT_TRUE(state.ok()) << state.error().message;
      EXPECT_FALSE(state->dcbx);
      EXPECT_EQ(state->apps.size(), 64u);
    } else if (len >= nest_end + NLA_HDRLEN + 1) {
      // DCB_ATTR_DCBX complete, only its alignment padding cut: netlink allows an unpadded
      // last attribute.
      ASSERT_TRUE(state.ok()) << "len " << len << ": " << state.error().message;
      EXPECT_TRUE(state->dcbx);
    } else {
      EXPECT_FALSE(state.ok()) << "len " << len;
    }
  }
}

TEST(DcbParseMalformed, RandomGarbageNeverParsesIntoAState) {
  std::mt19937 rng(20260601);
  int accepted = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::byte> junk(rng() % 300);
    for (auto& b : junk) b = static_cast<std::byte>(rng());
    auto state = ParseIeeeGetPayload(junk, "junk");
    if (state.ok()) ++accepted;  // only possible if the junk happens to be well formed
  }
  // A random stream almost never holds a well-formed required DCB_ATTR_IEEE nest.
  EXPECT_LE(accepted, 2);

  // Mutating single bytes of a valid reply: each result is either an Error or a state whose
  // arrays are still within bounds (the parser rejects prio_tc >= 8).
  MlnxQosOutput q =
      ParseMlnxQos(ReadCapture("07_att_netarbiter_mlnx_qos_trust_dscp_pfc3_cma_roce_tos.txt"), 0);
  auto valid = BuildPayload(SpecFromCapture(q));
  for (int round = 0; round < 3000; ++round) {
    auto mutated = valid;
    mutated[rng() % mutated.size()] = static_cast<std::byte>(rng());
    auto state = ParseIeeeGetPayload(mutated, "mut");
    if (state.ok() && state->ets) {
      for (uint8_t tc : state->ets->prio_tc) ASSERT_LT(tc, 8);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The real kernel of the build machine: CONFIG_DCB=y, but no device with dcbnl_ops.

TEST(DcbReaderKernel, LoopbackHasNoDcbWhichIsAbsentNotAnError) {
  auto socket = netlink::Socket::Open(NETLINK_ROUTE);
  ASSERT_TRUE(socket.ok()) << socket.error().message;
  DcbReader client(&*socket);
  auto state = client.Read("lo");
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_FALSE(state->has_value());
}

TEST(DcbReaderKernel, UnknownDeviceIsAnErrorNamingIt) {
  auto socket = netlink::Socket::Open(NETLINK_ROUTE);
  ASSERT_TRUE(socket.ok());
  DcbReader client(&*socket);
  auto state = client.Read("nosuchdev0");
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().errnum, ENODEV);
  EXPECT_NE(state.error().message.find("nosuchdev0"), std::string::npos);
}

}  // namespace
}  // namespace roceqos
