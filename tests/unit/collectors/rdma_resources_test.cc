#include "collectors/rdma_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/support/netlink_messages.h"

namespace roceqos {
namespace {

using netlink::Message;
using netlink::testing::AttrStream;
using netlink::testing::Buffer;
using ::testing::HasSubstr;

constexpr uint16_t kQpGet = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET);
constexpr uint16_t kResGet = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_GET);
constexpr uint8_t kIbQptGsi = 1;
constexpr uint8_t kIbQptRc = 2;
constexpr uint8_t kIbQpsRts = 3;
constexpr uint8_t kIbQpsErr = 6;

/// One QP as fill_res_qp_entry reports it.
struct Qp {
  uint32_t lqpn = 0;
  std::optional<uint32_t> port;
  uint8_t type = kIbQptRc;
  uint8_t state = kIbQpsRts;
  std::optional<uint32_t> pid;
  std::optional<std::string> kern_name;
};

/// A user QP; port 0 = not bound to a port yet, pid 0 = no RDMA_NLDEV_ATTR_RES_PID.
Qp UserQp(uint32_t lqpn, uint32_t port, uint32_t pid, uint8_t state = kIbQpsRts) {
  Qp qp;
  qp.lqpn = lqpn;
  if (port != 0) qp.port = port;
  if (pid != 0) qp.pid = pid;
  qp.state = state;
  return qp;
}

Qp KernelQp(uint32_t lqpn, uint32_t port, std::string name, uint8_t type = kIbQptGsi) {
  Qp qp;
  qp.lqpn = lqpn;
  if (port != 0) qp.port = port;
  qp.type = type;
  qp.kern_name = std::move(name);
  return qp;
}

/// A RES_QP_GET dump message as res_get_common_dumpit builds it: the handle, then the RES_QP
/// table, with the attributes attribution ignores too (RQPN, PSNs, PDN).
Buffer QpReply(uint32_t dev_index, const std::vector<Qp>& qps) {
  Message msg(kQpGet, NLM_F_MULTI);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  msg.PutString(RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_RES_QP);
  for (const Qp& qp : qps) {
    size_t entry = msg.BeginNest(RDMA_NLDEV_ATTR_RES_QP_ENTRY);
    if (qp.port) msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, *qp.port);
    msg.PutU32(RDMA_NLDEV_ATTR_RES_LQPN, qp.lqpn);
    if (qp.type == kIbQptRc) {
      msg.PutU32(RDMA_NLDEV_ATTR_RES_RQPN, qp.lqpn + 1);
      msg.PutU32(RDMA_NLDEV_ATTR_RES_RQ_PSN, 0x1234);
      msg.PutU32(RDMA_NLDEV_ATTR_RES_SQ_PSN, 0x5678);
      msg.PutU8(RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, 0);
    }
    msg.PutU8(RDMA_NLDEV_ATTR_RES_TYPE, qp.type);
    msg.PutU8(RDMA_NLDEV_ATTR_RES_STATE, qp.state);
    if (!qp.kern_name) msg.PutU32(RDMA_NLDEV_ATTR_RES_PDN, 3);
    if (qp.kern_name) msg.PutString(RDMA_NLDEV_ATTR_RES_KERN_NAME, *qp.kern_name);
    if (qp.pid) msg.PutU32(RDMA_NLDEV_ATTR_RES_PID, *qp.pid);
    msg.EndNest(entry);
  }
  msg.EndNest(table);
  return AttrStream(msg);
}

netlink::Bytes View(const Buffer& buffer) { return {buffer.data(), buffer.size()}; }

RdmaQpOwnerKey User(uint32_t dev, uint32_t port, uint32_t pid) { return {dev, port, pid, ""}; }
RdmaQpOwnerKey Kernel(uint32_t dev, uint32_t port, const char* name) {
  return {dev, port, 0, name};
}

TEST(RdmaResourcesTest, CountsQpsPerOwnerAcrossMessages) {
  // rxe0 after `rping -s` and `rping -c`: the GSI QP of ib_core, an RC QP each for two processes,
  // one of them with a second QP in ERR. A dump spans messages; the tally sums them.
  RdmaQpTally tally;
  ASSERT_TRUE(tally
                  .AddQpReply(View(QpReply(3, {KernelQp(1, 1, "ib_core"), UserQp(17, 1, 4100),
                                               UserQp(18, 1, 4100, kIbQpsErr)})))
                  .ok());
  ASSERT_TRUE(tally.AddQpReply(View(QpReply(3, {UserQp(19, 1, 4200), UserQp(20, 0, 4200)}))).ok());
  const std::map<RdmaQpOwnerKey, RdmaQpCount> expected = {
      {Kernel(3, 1, "ib_core"), {1, 0}},
      {User(3, 1, 4100), {2, 1}},
      {User(3, 1, 4200), {1, 0}},
      {User(3, 0, 4200), {1, 0}},  // created, not yet bound to a port
  };
  EXPECT_EQ(tally.owners(), expected);
  EXPECT_EQ(tally.total_qps(), 5U);
  EXPECT_EQ(tally.overflow_qps(), 0U);
  tally.Clear();
  EXPECT_TRUE(tally.owners().empty());
  EXPECT_EQ(tally.total_qps(), 0U);
}

TEST(RdmaResourcesTest, ZombieUserQpHasNoPidAndCountsAsPidZero) {
  // fill_res_name_pid omits the PID of a task already exiting; such a QP has no KERN_NAME either.
  RdmaQpTally tally;
  ASSERT_TRUE(tally.AddQpReply(View(QpReply(1, {UserQp(30, 2, 0)}))).ok());
  EXPECT_EQ(tally.owners().begin()->first, User(1, 2, 0));
}

TEST(RdmaResourcesTest, EmptyDumpMessageAddsNothing) {
  RdmaQpTally tally;
  ASSERT_TRUE(tally.AddQpReply(View(QpReply(1, {}))).ok());
  EXPECT_TRUE(tally.owners().empty());
}

TEST(RdmaResourcesTest, MalformedMessageAddsNothing) {
  RdmaQpTally tally;
  // The second entry lacks RDMA_NLDEV_ATTR_RES_LQPN: the first must not be counted either.
  Message msg(kQpGet, NLM_F_MULTI);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_RES_QP);
  size_t first = msg.BeginNest(RDMA_NLDEV_ATTR_RES_QP_ENTRY);
  msg.PutU32(RDMA_NLDEV_ATTR_RES_LQPN, 5);
  msg.PutU32(RDMA_NLDEV_ATTR_RES_PID, 77);
  msg.EndNest(first);
  size_t second = msg.BeginNest(RDMA_NLDEV_ATTR_RES_QP_ENTRY);
  msg.PutU32(RDMA_NLDEV_ATTR_RES_PID, 78);
  msg.EndNest(second);
  msg.EndNest(table);
  Result<void> added = tally.AddQpReply(View(AttrStream(msg)));
  ASSERT_FALSE(added.ok());
  EXPECT_THAT(added.error().message, HasSubstr("RDMA_NLDEV_ATTR_RES_LQPN"));
  EXPECT_THAT(added.error().message, HasSubstr("entry #1"));
  EXPECT_TRUE(tally.owners().empty());
  EXPECT_EQ(tally.total_qps(), 0U);
}

TEST(RdmaResourcesTest, WrongLengthsAndMissingHandleAreErrors) {
  RdmaQpTally tally;
  Message no_dev(kQpGet, 0);
  no_dev.EndNest(no_dev.BeginNest(RDMA_NLDEV_ATTR_RES_QP));
  Result<void> added = tally.AddQpReply(View(AttrStream(no_dev)));
  ASSERT_FALSE(added.ok());
  EXPECT_THAT(added.error().message, HasSubstr("RDMA_NLDEV_ATTR_DEV_INDEX"));

  Message short_pid(kQpGet, 0);
  short_pid.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  size_t table = short_pid.BeginNest(RDMA_NLDEV_ATTR_RES_QP);
  size_t entry = short_pid.BeginNest(RDMA_NLDEV_ATTR_RES_QP_ENTRY);
  short_pid.PutU32(RDMA_NLDEV_ATTR_RES_LQPN, 1);
  short_pid.PutU16(RDMA_NLDEV_ATTR_RES_PID, 7);
  short_pid.EndNest(entry);
  short_pid.EndNest(table);
  added = tally.AddQpReply(View(AttrStream(short_pid)));
  ASSERT_FALSE(added.ok());
  EXPECT_THAT(added.error().message, HasSubstr("RDMA_NLDEV_ATTR_RES_PID"));

  // A truncated message: the table's length runs past the bytes present.
  Buffer whole = QpReply(1, {UserQp(9, 1, 5)});
  whole.resize(whole.size() - 6);
  EXPECT_FALSE(tally.AddQpReply(View(whole)).ok());
  EXPECT_TRUE(tally.owners().empty());
}

TEST(RdmaResourcesTest, KernNameOutsideTheModuleCharsetIsRefused) {
  RdmaQpTally tally;
  Result<void> added = tally.AddQpReply(View(QpReply(1, {KernelQp(1, 1, "ib\"core\n")})));
  ASSERT_FALSE(added.ok());
  EXPECT_THAT(added.error().message, HasSubstr("RDMA_NLDEV_ATTR_RES_KERN_NAME"));
  EXPECT_FALSE(tally.AddQpReply(View(QpReply(1, {KernelQp(1, 1, std::string(80, 'a'))}))).ok());
}

TEST(RdmaResourcesTest, OwnersAreCapped) {
  RdmaQpTally tally;
  std::vector<Qp> qps;
  for (uint32_t pid = 1; pid <= RdmaQpTally::kMaxOwners + 10; ++pid) {
    qps.push_back(UserQp(pid, 1, pid));
    if (qps.size() == 200) {
      ASSERT_TRUE(tally.AddQpReply(View(QpReply(1, qps))).ok());
      qps.clear();
    }
  }
  ASSERT_TRUE(tally.AddQpReply(View(QpReply(1, qps))).ok());
  EXPECT_EQ(tally.owners().size(), RdmaQpTally::kMaxOwners);
  EXPECT_EQ(tally.overflow_qps(), 10U);
  EXPECT_EQ(tally.total_qps(), RdmaQpTally::kMaxOwners + 10);
}

/// A RES_GET reply as fill_res_info builds it, CURR after a PAD as nla_put_u64_64bit may put it.
Buffer SummaryReply(uint32_t dev_index, const char* dev,
                    const std::vector<std::pair<std::string, uint64_t>>& entries) {
  Message msg(kResGet, NLM_F_MULTI);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  msg.PutString(RDMA_NLDEV_ATTR_DEV_NAME, dev);
  size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_RES_SUMMARY);
  for (const auto& [name, curr] : entries) {
    size_t entry = msg.BeginNest(RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY);
    msg.PutString(RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, name);
    msg.Put(RDMA_NLDEV_ATTR_PAD, nullptr, 0);
    msg.PutU64(RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, curr);
    msg.EndNest(entry);
  }
  msg.EndNest(table);
  return AttrStream(msg);
}

TEST(RdmaResourcesTest, SummaryInKernelOrder) {
  const std::vector<std::pair<std::string, uint64_t>> entries = {
      {"pd", 3}, {"cq", 5}, {"qp", 4}, {"cm_id", 2}, {"mr", 1}, {"ctx", 2}, {"srq", 0}};
  Result<RdmaResourceSummary> summary =
      ParseRdmaResourceSummary(View(SummaryReply(3, "rxe0", entries)));
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  EXPECT_EQ(summary->device_index, 3U);
  EXPECT_EQ(summary->device, "rxe0");
  EXPECT_EQ(summary->entries, entries);
}

TEST(RdmaResourcesTest, SummaryErrorsAndBound) {
  Message no_table(kResGet, 0);
  no_table.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  no_table.PutString(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
  Result<RdmaResourceSummary> missing = ParseRdmaResourceSummary(View(AttrStream(no_table)));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("RDMA_NLDEV_ATTR_RES_SUMMARY"));

  Result<RdmaResourceSummary> empty_name =
      ParseRdmaResourceSummary(View(SummaryReply(1, "mlx5_0", {{"", 1}})));
  ASSERT_FALSE(empty_name.ok());
  EXPECT_THAT(empty_name.error().message, HasSubstr("RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME"));

  std::vector<std::pair<std::string, uint64_t>> many;
  for (size_t i = 0; i < kMaxSummaryEntries + 5; ++i) many.emplace_back("t" + std::to_string(i), i);
  Result<RdmaResourceSummary> capped =
      ParseRdmaResourceSummary(View(SummaryReply(1, "mlx5_0", many)));
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->entries.size(), kMaxSummaryEntries);
}

TEST(RdmaResourcesTest, RequestBytes) {
  Message qp = RdmaQpDumpRequest(7);
  const nlmsghdr* header = qp.header();
  EXPECT_EQ(header->nlmsg_type, kQpGet);
  EXPECT_EQ(header->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  Buffer attrs = AttrStream(qp);
  ASSERT_EQ(attrs.size(), 8U);  // one u32 attribute
  uint16_t len = 0;
  uint16_t type = 0;
  uint32_t value = 0;
  std::memcpy(&len, attrs.data(), 2);
  std::memcpy(&type, attrs.data() + 2, 2);
  std::memcpy(&value, attrs.data() + 4, 4);
  EXPECT_EQ(len, 8);
  EXPECT_EQ(type, RDMA_NLDEV_ATTR_DEV_INDEX);
  EXPECT_EQ(value, 7U);

  Message summary = RdmaResourceSummaryDumpRequest();
  EXPECT_EQ(summary.header()->nlmsg_type, kResGet);
  EXPECT_EQ(summary.header()->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  EXPECT_EQ(summary.bytes().size(), sizeof(nlmsghdr));
}

TEST(RdmaResourcesTest, EveryTruncationAndByteFlipIsAnErrorOrConsistentCounts) {
  const Buffer reply =
      QpReply(3, {KernelQp(1, 1, "ib_core"), UserQp(17, 1, 4100), UserQp(18, 0, 4100, kIbQpsErr)});
  auto check = [](const Buffer& bytes) {
    RdmaQpTally tally;
    const bool added = tally.AddQpReply(View(bytes)).ok();
    uint64_t counted = 0;
    for (const auto& [key, count] : tally.owners()) {
      EXPECT_LE(count.qps_in_error, count.qps);
      counted += count.qps;
    }
    EXPECT_EQ(counted, tally.total_qps());
    if (!added) {
      EXPECT_EQ(counted, 0U);
    }
    (void)ParseRdmaResourceSummary(View(bytes));
  };
  for (size_t len = 0; len < reply.size(); ++len) {
    check(Buffer(reply.begin(), reply.begin() + static_cast<std::ptrdiff_t>(len)));
  }
  for (size_t at = 0; at < reply.size(); ++at) {
    for (std::byte mask : {std::byte{0x01}, std::byte{0x80}, std::byte{0xff}}) {
      Buffer flipped = reply;
      flipped[at] ^= mask;
      check(flipped);
    }
  }
}

}  // namespace
}  // namespace roceqos
