// Fuzz-style robustness test: recorded and constructed replies, bit-flipped, truncated, extended
// and with length fields overwritten, go through every netlink parser. Each outcome must be an
// Error with a message or a result that satisfies the parser's invariants; anything else (a crash,
// an out-of-bounds read under ASan/UBSan) fails. Deterministic seed, so failures reproduce.

#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "collectors/discovery.h"
#include "collectors/netlink/genl.h"
#include "collectors/netlink/socket.h"
#include "collectors/rdma.h"

namespace roceqos {
namespace {

using Buffer = std::vector<std::byte>;

Buffer ReadFixture(const std::string& name) {
  std::ifstream in(std::string(ROCEQOS_FIXTURES_DIR) + "/netlink/" + name, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Buffer bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

/// A STAT_GET reply message with mlx5-like counters and a PORT_GET reply, as the kernel frames
/// them (NLDEV has no family header).
Buffer RdmaReplies() {
  netlink::Message stat(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0);
  stat.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 2);
  stat.PutString(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_bond_0");
  stat.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  size_t table = stat.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  for (const char* name : {"out_of_buffer", "rp_cnp_handled", "np_cnp_sent",
                           "np_ecn_marked_roce_packets", "rx_icrc_encapsulated"}) {
    size_t entry = stat.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
    stat.PutString(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name);
    stat.PutU64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, std::strlen(name) * 1000003ULL);
    stat.EndNest(entry);
  }
  stat.EndNest(table);
  netlink::Message port(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_PORT_GET), NLM_F_MULTI);
  port.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 2);
  port.PutString(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_bond_0");
  port.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  port.PutU8(RDMA_NLDEV_ATTR_PORT_STATE, 4);
  port.PutU8(RDMA_NLDEV_ATTR_PORT_PHYS_STATE, 5);
  port.PutU32(RDMA_NLDEV_ATTR_NDEV_INDEX, 8);
  port.PutString(RDMA_NLDEV_ATTR_NDEV_NAME, "eth01");
  Buffer out;
  for (netlink::Message* msg : {&stat, &port}) {
    msg->header()->nlmsg_seq = 1;
    msg->header()->nlmsg_pid = 7;
    auto bytes = msg->bytes();
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

Buffer Mutate(const Buffer& seed, std::mt19937& rng) {
  Buffer out = seed;
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  const int mutations = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < mutations && !out.empty(); ++i) {
    switch (pick(5)) {
      case 0:  // flip a bit
        out[pick(out.size())] ^= static_cast<std::byte>(1u << pick(8));
        break;
      case 1:  // truncate
        out.resize(pick(out.size() + 1));
        break;
      case 2: {  // overwrite a 16-bit field (nla_len, nla_type, nlmsg_type, ...) at 2-byte offsets
        if (out.size() < 2) break;
        const size_t at = pick(out.size() / 2) * 2;
        const auto value = static_cast<uint16_t>(pick(0x10000));
        std::memcpy(out.data() + at, &value, sizeof(value));
        break;
      }
      case 3:  // append junk
        for (size_t n = pick(12); n > 0; --n) out.push_back(static_cast<std::byte>(pick(256)));
        break;
      default: {  // shrink or grow a length by a little
        const size_t at = pick(out.size() / 2 + 1) * 2;
        if (at + 2 > out.size()) break;
        uint16_t value;
        std::memcpy(&value, out.data() + at, sizeof(value));
        value = static_cast<uint16_t>(value + static_cast<int>(pick(9)) - 4);
        std::memcpy(out.data() + at, &value, sizeof(value));
        break;
      }
    }
  }
  return out;
}

struct Outcomes {
  size_t ok = 0;
  size_t errors = 0;

  template <typename T>
  void Count(const Result<T>& result) {
    if (result) {
      ++ok;
    } else {
      ++errors;
      EXPECT_FALSE(result.error().message.empty());
    }
  }
};

/// Runs every parser on one (possibly mangled) datagram.
void ParseEverything(const Buffer& datagram, Outcomes& outcomes) {
  Result<void> walked =
      netlink::ForEachMessage(datagram, "fuzz", [&](const netlink::NlMessage& msg) -> Result<void> {
        Result<Device> device = ParseLinkReply(msg.body);
        outcomes.Count(device);
        if (device) {
          EXPECT_FALSE(device->name.empty());
          EXPECT_LT(device->name.size(), 16u);
        }
        Result<CounterSet> counters = ParseRdmaStatReply(msg.body);
        outcomes.Count(counters);
        if (counters) {
          EXPECT_NE(counters->names, nullptr);
          if (counters->names) {
            EXPECT_EQ(counters->names->size(), counters->values.size());
          }
        }
        Result<RdmaPort> port = ParseRdmaPortReply(msg.body);
        outcomes.Count(port);
        if (port) {
          EXPECT_FALSE(port->device.empty());
          EXPECT_LT(port->netdev.size(), 16u);
        }
        outcomes.Count(ParseRdmaDeviceReply(msg.body));
        outcomes.Count(netlink::ParseGenlFamilyReply(msg));
        outcomes.Count(netlink::ParseErrorMessage(msg, "fuzz"));
        outcomes.Count(netlink::ParseDoneMessage(msg, "fuzz"));
        return {};
      });
  outcomes.Count(walked);
  nlmsghdr first{};
  if (datagram.size() >= sizeof(first)) std::memcpy(&first, datagram.data(), sizeof(first));
  for (int flags : {NLM_F_REQUEST | NLM_F_DUMP, NLM_F_REQUEST | NLM_F_ACK, NLM_F_REQUEST}) {
    netlink::ReplyReader reader(first.nlmsg_seq, first.nlmsg_pid, static_cast<uint16_t>(flags),
                                "fuzz");
    outcomes.Count(reader.Feed(datagram, [](const netlink::NlMessage& msg) -> Result<void> {
      Result<Device> device = ParseLinkReply(msg.body);
      if (!device) return device.error();
      return {};
    }));
  }
}

TEST(ParsersFuzz, MangledRepliesGiveErrorsOrValidResults) {
  const std::vector<Buffer> seeds = {
      ReadFixture("rtm_getlink_dump_veth_bridge.bin"),
      ReadFixture("nlmsgerr_einval_extack_getlink_strict.bin"),
      ReadFixture("genl_ctrl_newfamily_nlctrl.bin"),
      RdmaReplies(),
  };
  std::mt19937 rng(20241121);
  Outcomes outcomes;
  for (const Buffer& seed : seeds) {
    ASSERT_FALSE(seed.empty());
    ParseEverything(seed, outcomes);
    for (int i = 0; i < 1500; ++i) ParseEverything(Mutate(seed, rng), outcomes);
  }
  // Both paths were exercised: the fuzzer is not just producing garbage nor only valid input.
  EXPECT_GT(outcomes.ok, 1000u);
  EXPECT_GT(outcomes.errors, 1000u);
}

}  // namespace
}  // namespace roceqos
