#include "collectors/rdma.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/support/netlink_messages.h"

namespace roceqos {
namespace {

using netlink::Message;
using netlink::testing::AttrStream;
using netlink::testing::Buffer;
using netlink::testing::RawAttr;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using Counters = std::vector<std::pair<std::string, uint64_t>>;

constexpr uint16_t kStatGet = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET);
constexpr uint16_t kPortGet = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_PORT_GET);

/// The attribute stream of a STAT_GET reply as stat_get_doit_default_counter builds it.
Buffer StatReply(uint32_t dev_index, std::string_view dev_name, uint32_t port,
                 const Counters& counters, bool with_pad = false) {
  Message msg(kStatGet, 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  msg.PutString(RDMA_NLDEV_ATTR_DEV_NAME, dev_name);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, port);
  size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  for (const auto& [name, value] : counters) {
    size_t entry = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
    msg.PutString(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name);
    if (with_pad) msg.Put(RDMA_NLDEV_ATTR_PAD, nullptr, 0);  // nla_put_u64_64bit alignment
    msg.PutU64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, value);
    msg.EndNest(entry);
  }
  msg.EndNest(table);
  return AttrStream(msg);
}

/// Reads `rdma stat show link <link>` output from a real capture: the first line starting with
/// "link <link> " and its wrapped continuation lines, as name/value pairs.
Counters ReadCapturedStatLink(const std::string& file, const std::string& link) {
  std::ifstream in(std::string(ROCEQOS_CAPTURES_DIR) + "/" + file);
  EXPECT_TRUE(in) << file;
  std::string line;
  std::vector<std::string> tokens;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (!in_block) {
      if (line.rfind("link " + link + " ", 0) != 0) continue;
      in_block = true;
      line = line.substr(5 + link.size());
    } else if (line.empty() || line[0] == '#' || line[0] == '$' || line.rfind("link ", 0) == 0) {
      break;
    }
    std::istringstream words(line);
    for (std::string word; words >> word;) tokens.push_back(word);
  }
  Counters counters;
  EXPECT_EQ(tokens.size() % 2, 0u) << file << " " << link;
  for (size_t i = 0; i + 1 < tokens.size(); i += 2) {
    counters.emplace_back(tokens[i], std::stoull(tokens[i + 1]));
  }
  return counters;
}

std::vector<std::string> Names(const Counters& counters) {
  std::vector<std::string> names;
  for (const auto& c : counters) names.push_back(c.first);
  return names;
}

std::vector<uint64_t> Values(const Counters& counters) {
  std::vector<uint64_t> values;
  for (const auto& c : counters) values.push_back(c.second);
  return values;
}

void ExpectRoundTrip(const Counters& expected, bool with_pad = false) {
  Buffer reply = StatReply(3, "mlx5_0", 1, expected, with_pad);
  Result<CounterSet> parsed = ParseRdmaStatReply(reply);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_NE(parsed->names, nullptr);
  EXPECT_THAT(*parsed->names, ElementsAreArray(Names(expected)));
  EXPECT_THAT(parsed->values, ElementsAreArray(Values(expected)));
  EXPECT_EQ(parsed->size(), expected.size());
}

// --- STAT_GET from real captures -----------------------------------------------------------

TEST(ParseRdmaStatReply, ReturnsTheCountersOfMlx5LinkFromTheIproute2Capture) {
  Counters captured =
      ReadCapturedStatLink("10_iproute2_commitmsg_rdma_stat_link_monitor_mlx5.txt", "mlx5_2/1");
  ASSERT_EQ(captured.size(), 23u);  // the capture's counter list, wrapped over six lines
  EXPECT_EQ(captured.front(), (std::pair<std::string, uint64_t>{"rx_write_requests", 8}));
  EXPECT_EQ(captured.back().first, "rx_icrc_encapsulated");
  ExpectRoundTrip(captured);
}

TEST(ParseRdmaStatReply, ReturnsTheCountersOfMlx5BondFromTheLagCapture) {
  const std::string file = "13_obsidian_notes_mlx5_bond_0_rdma_statistic_show_hw_counters_list.txt";
  Counters captured = ReadCapturedStatLink(file, "mlx5_bond_0/1");
  ASSERT_EQ(captured.size(), 29u);
  // Cross-check against the hw_counters directory listing in the same capture (minus lifespan).
  std::ifstream in(std::string(ROCEQOS_CAPTURES_DIR) + "/" + file);
  std::set<std::string> listed;
  bool in_listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ll ", 0) == 0 && line.find("hw_counters/") != std::string::npos) {
      in_listing = true;
      continue;
    }
    if (!in_listing) continue;
    if (line.empty()) break;
    if (line[0] != '-') continue;
    std::string name = line.substr(line.rfind(' ') + 1);
    if (name != "lifespan") listed.insert(name);
  }
  auto names = Names(captured);
  EXPECT_EQ(listed.size(), 29u);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), listed);
  ExpectRoundTrip(captured);
  Buffer reply = StatReply(2, "mlx5_bond_0", 1, captured);
  Result<CounterSet> parsed = ParseRdmaStatReply(reply);
  ASSERT_TRUE(parsed);
  auto at = [&](std::string_view name) {
    for (size_t i = 0; i < parsed->size(); ++i) {
      if ((*parsed->names)[i] == name) return parsed->values[i];
    }
    return std::numeric_limits<uint64_t>::max();
  };
  EXPECT_EQ(at("resp_cqe_error"), 3297u);
  EXPECT_EQ(at("resp_cqe_flush_error"), 2792u);
}

TEST(ParseRdmaStatReply, ReturnsEveryLinkOfTheFourPortCapture) {
  for (const char* link : {"mlx5_0/1", "mlx5_1/1", "mlx5_2/1", "mlx5_3/1"}) {
    Counters captured = ReadCapturedStatLink(
        "22_obsidian_notes_show_counters_heavy_ecn_mlx5_bond_0_show_gids_rdma_stat_cx4lx.txt",
        link);
    ASSERT_EQ(captured.size(), 29u) << link;
    ExpectRoundTrip(captured, /*with_pad=*/true);
  }
}

TEST(ParseRdmaStatReply, ReturnsTheFifteenRxeCountersInOrder) {
  // rxe_counter_descs[] (drivers/infiniband/sw/rxe/rxe_hw_counters.c),
  // docs/kernel-interfaces.md §6.
  const std::vector<std::string> rxe = {"sent_pkts",           "rcvd_pkts",
                                        "duplicate_request",   "out_of_seq_request",
                                        "rcvd_rnr_err",        "send_rnr_err",
                                        "rcvd_seq_err",        "ack_deferred",
                                        "retry_exceeded_err",  "retry_rnr_exceeded_err",
                                        "completer_retry_err", "send_err",
                                        "link_downed",         "rdma_sends",
                                        "rdma_recvs"};
  Counters counters;
  for (size_t i = 0; i < rxe.size(); ++i) counters.emplace_back(rxe[i], 1000 * i + 7);
  counters[0].second = std::numeric_limits<uint64_t>::max();  // u64 survives intact
  ExpectRoundTrip(counters);
}

TEST(ParseRdmaStatReply, AnEmptyTableIsAnEmptySet) {
  Buffer reply = StatReply(1, "rxe0", 1, {});
  Result<CounterSet> parsed = ParseRdmaStatReply(reply);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->size(), 0u);
  ASSERT_NE(parsed->names, nullptr);
  EXPECT_TRUE(parsed->names->empty());
}

// --- Sharing the names between samples -----------------------------------------------------

TEST(ParseRdmaStatReply, SharesUnchangedNamesWithThePreviousSample) {
  Counters first = {{"rp_cnp_handled", 1}, {"np_cnp_sent", 2}, {"np_ecn_marked_roce_packets", 3}};
  Buffer reply1 = StatReply(1, "mlx5_0", 1, first);
  Result<CounterSet> sample1 = ParseRdmaStatReply(reply1);
  ASSERT_TRUE(sample1);

  Counters second = {
      {"rp_cnp_handled", 10}, {"np_cnp_sent", 20}, {"np_ecn_marked_roce_packets", 30}};
  Buffer reply2 = StatReply(1, "mlx5_0", 1, second);
  Result<CounterSet> sample2 = ParseRdmaStatReply(reply2, sample1->names);
  ASSERT_TRUE(sample2);
  EXPECT_EQ(sample2->names.get(), sample1->names.get());
  EXPECT_THAT(sample2->values, ElementsAreArray({10u, 20u, 30u}));
}

TEST(ParseRdmaStatReply, BuildsNewNamesWhenTheListChanges) {
  Counters base = {{"a", 1}, {"b", 2}, {"c", 3}};
  Buffer base_reply = StatReply(1, "mlx5_0", 1, base);
  Result<CounterSet> previous = ParseRdmaStatReply(base_reply);
  ASSERT_TRUE(previous);
  const std::vector<std::string> before = *previous->names;

  // An optional counter enabled at the end, one renamed in the middle, one removed.
  for (const Counters& changed :
       {Counters{{"a", 1}, {"b", 2}, {"c", 3}, {"cc_rx_ce_pkts", 4}},
        Counters{{"a", 1}, {"x", 2}, {"c", 3}}, Counters{{"a", 1}, {"b", 2}}, Counters{}}) {
    Buffer reply = StatReply(1, "mlx5_0", 1, changed);
    Result<CounterSet> parsed = ParseRdmaStatReply(reply, previous->names);
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_NE(parsed->names.get(), previous->names.get());
    EXPECT_THAT(*parsed->names, ElementsAreArray(Names(changed)));
    EXPECT_THAT(parsed->values, ElementsAreArray(Values(changed)));
  }
  EXPECT_EQ(*previous->names, before);  // the shared list is never modified
}

// --- Malformed STAT_GET replies ------------------------------------------------------------

TEST(ParseRdmaStatReply, AnEntryWithoutValueIsAnError) {
  Message msg(kStatGet, 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  size_t good = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
  msg.PutString(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "np_cnp_sent");
  msg.PutU64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 5);
  msg.EndNest(good);
  size_t bad = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
  msg.PutString(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "rp_cnp_handled");
  msg.EndNest(bad);
  msg.EndNest(table);
  Buffer reply = AttrStream(msg);
  Result<CounterSet> parsed = ParseRdmaStatReply(reply);
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message, HasSubstr("(entry #1)"));
  EXPECT_THAT(parsed.error().message,
              HasSubstr("missing required attribute RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE"));
}

TEST(ParseRdmaStatReply, AValueOfTheWrongLengthIsAnError) {
  Message msg(kStatGet, 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  size_t entry = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
  msg.PutString(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "out_of_buffer");
  msg.PutU32(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 5);  // u32 where the kernel puts a u64
  msg.EndNest(entry);
  msg.EndNest(table);
  Buffer reply = AttrStream(msg);
  Result<CounterSet> parsed = ParseRdmaStatReply(reply);
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message,
              HasSubstr("RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE (type 83): u64 payload is 4 "
                        "byte(s), expected 8"));
}

TEST(ParseRdmaStatReply, GarbageInsideTheCounterTableIsAnError) {
  Message msg(kStatGet, 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  const unsigned char garbage[] = {0x03, 0x00, 0x51, 0x00, 0xde, 0xad, 0xbe, 0xef};
  msg.Put(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, garbage, sizeof(garbage));
  Buffer reply = AttrStream(msg);
  Result<CounterSet> parsed = ParseRdmaStatReply(reply);
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message, HasSubstr("RDMA_NLDEV_ATTR_STAT_HWCOUNTERS"));
  EXPECT_THAT(parsed.error().message, HasSubstr("nla_len 3 is below the 4-byte header"));

  // An entry whose own stream is garbage.
  Message entry_msg(kStatGet, 0);
  entry_msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  entry_msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  size_t table = entry_msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  const unsigned char bad_entry[] = {0x40, 0x00, 0x52, 0x00, 'x', 0, 0, 0};
  entry_msg.Put(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, bad_entry, sizeof(bad_entry));
  entry_msg.EndNest(table);
  Buffer entry_reply = AttrStream(entry_msg);
  parsed = ParseRdmaStatReply(entry_reply);
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message, HasSubstr("(entry #0)"));
  EXPECT_THAT(parsed.error().message, HasSubstr("exceeds"));
}

TEST(ParseRdmaStatReply, ANameWithoutNulIsAnError) {
  Message msg(kStatGet, 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  size_t entry = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
  msg.Put(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "abcd", 4);
  msg.PutU64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 1);
  msg.EndNest(entry);
  msg.EndNest(table);
  Buffer reply = AttrStream(msg);
  Result<CounterSet> parsed = ParseRdmaStatReply(reply);
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message, HasSubstr("no terminating NUL"));
}

TEST(ParseRdmaStatReply, AReplyWithoutTheCounterTableIsAnError) {
  Message msg(kStatGet, 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  Buffer reply = AttrStream(msg);
  Result<CounterSet> parsed = ParseRdmaStatReply(reply);
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message,
              HasSubstr("missing required attribute RDMA_NLDEV_ATTR_STAT_HWCOUNTERS"));
}

TEST(ParseRdmaStatReply, IgnoresUnknownAttributesInsideTheTable) {
  Message msg(kStatGet, 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  msg.PutU32(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX, 9);  // not an entry: skipped
  size_t entry = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
  msg.PutString(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "np_cnp_sent");
  msg.PutU64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 42);
  msg.PutU8(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC, 1);
  msg.EndNest(entry);
  msg.EndNest(table);
  Buffer reply = AttrStream(msg);
  Result<CounterSet> parsed = ParseRdmaStatReply(reply);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_THAT(*parsed->names, ElementsAreArray({"np_cnp_sent"}));
  EXPECT_THAT(parsed->values, ElementsAreArray({42u}));
}

// --- PORT_GET / GET ------------------------------------------------------------------------

Buffer PortReply(uint32_t dev_index, std::string_view dev_name, uint32_t port, uint8_t state,
                 uint8_t phys, int32_t ndev_index, std::string_view ndev_name) {
  Message msg(kPortGet, 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  msg.PutString(RDMA_NLDEV_ATTR_DEV_NAME, dev_name);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, port);
  msg.PutU8(RDMA_NLDEV_ATTR_PORT_STATE, state);
  msg.PutU8(RDMA_NLDEV_ATTR_PORT_PHYS_STATE, phys);
  if (ndev_index != 0) {
    msg.PutU32(RDMA_NLDEV_ATTR_NDEV_INDEX, static_cast<uint32_t>(ndev_index));
    msg.PutString(RDMA_NLDEV_ATTR_NDEV_NAME, ndev_name);
  }
  return AttrStream(msg);
}

TEST(ParseRdmaPortReply, MapsThePortToItsNetdev) {
  // 10_iproute2 [D]: "4/1: mlx5_3/1: state ACTIVE physical_state LINK_UP netdev ens7
  // netdev_index 7" (IB_PORT_ACTIVE = 4, LINK_UP = 5).
  Buffer reply = PortReply(4, "mlx5_3", 1, 4, 5, 7, "ens7");
  Result<RdmaPort> port = ParseRdmaPortReply(reply);
  ASSERT_TRUE(port) << port.error().message;
  RdmaPort expected;
  expected.device = "mlx5_3";
  expected.device_index = 4;
  expected.port = 1;
  expected.port_state = 4;
  expected.phys_state = 5;
  expected.netdev = "ens7";
  expected.netdev_index = 7;
  EXPECT_EQ(*port, expected);
}

TEST(ParseRdmaPortReply, APortWhoseNetdevIsInAnotherNetnsHasNoNetdev) {
  Buffer reply = PortReply(2, "mlx5_1", 1, 1, 3, 0, "");
  Result<RdmaPort> port = ParseRdmaPortReply(reply);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_EQ(port->netdev, "");
  EXPECT_EQ(port->netdev_index, 0);
  EXPECT_EQ(port->device, "mlx5_1");
}

TEST(ParseRdmaPortReply, RejectsAReplyWithoutDeviceNameOrWithAWrongStateWidth) {
  Message msg(kPortGet, 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  Buffer no_name = AttrStream(msg);
  Result<RdmaPort> port = ParseRdmaPortReply(no_name);
  ASSERT_FALSE(port);
  EXPECT_THAT(port.error().message, HasSubstr("RDMA_NLDEV_ATTR_DEV_NAME"));

  Message wide(kPortGet, 0);
  wide.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  wide.PutString(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
  wide.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  wide.PutU32(RDMA_NLDEV_ATTR_PORT_STATE, 4);
  Buffer wide_state = AttrStream(wide);
  port = ParseRdmaPortReply(wide_state);
  ASSERT_FALSE(port);
  EXPECT_THAT(port.error().message, HasSubstr("RDMA_NLDEV_ATTR_PORT_STATE"));
}

TEST(ParseRdmaDeviceReply, ReadsNameProtocolAndPortCount) {
  // 10_iproute2 [E]: "11: mlx5_0: node_type ca protocol roce fw 12.28.2006".
  Message msg(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 11);
  msg.PutString(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  msg.PutString(RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce");
  Buffer reply = AttrStream(msg);
  Result<RdmaDevice> device = ParseRdmaDeviceReply(reply);
  ASSERT_TRUE(device) << device.error().message;
  EXPECT_EQ(*device, (RdmaDevice{11, "mlx5_0", 1, "roce"}));
}

// --- This host -----------------------------------------------------------------------------

TEST(RdmaCollectorOpen, MatchesWhetherThisKernelHasRdmaNetlink) {
  const int probe = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  const int probe_errno = probe < 0 ? errno : 0;
  if (probe >= 0) close(probe);

  Result<std::unique_ptr<RdmaCollector>> collector = RdmaCollector::Open();
  if (probe_errno != 0) {
    ASSERT_FALSE(collector);
    EXPECT_EQ(collector.error().errnum, probe_errno);
    EXPECT_THAT(collector.error().message, HasSubstr("RDMA netlink"));
  } else {
    ASSERT_TRUE(collector) << collector.error().message;
    Result<std::vector<RdmaPort>> ports = (*collector)->ListPorts();
    ASSERT_TRUE(ports) << ports.error().message;
    for (const RdmaPort& port : *ports) {
      EXPECT_FALSE(port.device.empty());
      EXPECT_GE(port.port, 1u);
    }
  }
}

}  // namespace
}  // namespace roceqos

namespace roceqos {
namespace {

RdmaPort PortOf(uint32_t device_index, uint32_t port) {
  RdmaPort p;
  p.device_index = device_index;
  p.port = port;
  return p;
}

// Device churn: each re-registered device gets a new index, so the cache must shrink back to the
// ports present, keeping the shared names of those still there.
TEST(PortNamesCache, ForgetsPortsOfDevicesNoLongerPresent) {
  PortNamesCache cache;
  auto names =
      std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"out_of_buffer"});
  for (uint32_t index = 1; index <= 100; ++index) cache[PortKey(index, 1)] = names;
  cache[PortKey(100, 2)] = names;
  ForgetAbsentPorts(cache, {PortOf(100, 1), PortOf(100, 2), PortOf(101, 1)});
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.at(PortKey(100, 1)), names);
  EXPECT_TRUE(cache.contains(PortKey(100, 2)));
  EXPECT_FALSE(cache.contains(PortKey(99, 1)));
  ForgetAbsentPorts(cache, {});
  EXPECT_TRUE(cache.empty());
}

TEST(PortNamesCache, KeySeparatesDeviceAndPort) {
  EXPECT_NE(PortKey(1, 2), PortKey(2, 1));
  EXPECT_EQ(PortKey(0xffffffffu, 0xffffffffu), ~uint64_t{0});
}

}  // namespace
}  // namespace roceqos
