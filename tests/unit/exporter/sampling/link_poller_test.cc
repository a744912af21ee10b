#include "exporter/sampling/link_poller.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "exporter/core/error_reason.h"

namespace roceqos {
namespace {

// Per-netdev answers; a netdev without an entry answers EOPNOTSUPP everywhere (a 5.10 kernel),
// one in `failures` fails every message with that errno. Counts reads per netdev.
class FakeLinkIo : public LinkStatsIo {
 public:
  Result<FecReply> ReadFec(const std::string& ifname) override {
    ++reads[ifname];
    if (auto f = failures.find(ifname); f != failures.end()) return MakeError(f->second, "x");
    if (auto it = fec.find(ifname); it != fec.end()) return it->second;
    return MakeError(EOPNOTSUPP, "Operation not supported");
  }
  Result<StdStatsReply> ReadStdStats(const std::string& ifname) override {
    if (auto it = std_stats.find(ifname); it != std_stats.end()) return it->second;
    return MakeError(EOPNOTSUPP, "Operation not supported");
  }
  Result<LinkStateReply> ReadLinkState(const std::string& ifname) override {
    if (auto it = state.find(ifname); it != state.end()) return it->second;
    return MakeError(EOPNOTSUPP, "Operation not supported");
  }

  std::map<std::string, FecReply> fec;
  std::map<std::string, StdStatsReply> std_stats;
  std::map<std::string, LinkStateReply> state;
  std::map<std::string, int> failures;
  std::map<std::string, int> reads;
};

struct Harness {
  FakeLinkIo* io = nullptr;
  std::vector<std::string> netdevs{"sim0", "sim1"};
  std::map<std::string, PhyBitCounts> bits;
  std::unique_ptr<LinkPoller> poller;

  Harness() {
    auto fake = std::make_unique<FakeLinkIo>();
    io = fake.get();
    io->fec["sim0"] = FecReply{.active_link_mode = 50, .corrected_blocks = {9, 4, 5}};
    io->std_stats["sim0"] = StdStatsReply{.symbol_errors = 3, .fcs_errors = 2};
    io->state["sim0"] = LinkStateReply{.link_up = true, .link_down_events = 1};
    poller = std::make_unique<LinkPoller>(
        LinkPollerOptions{.interval = std::chrono::seconds(10)}, std::move(fake),
        [this] { return netdevs; }, [this] { return bits; });
  }
};

TEST(LinkPoller, NothingPublishedBeforeTheFirstRound) {
  Harness h;
  EXPECT_EQ(h.poller->Latest(), nullptr);
}

TEST(LinkPoller, PublishesEachNetdevWithWhatItsKernelHas) {
  Harness h;
  h.poller->PollOnce();
  auto state = h.poller->Latest();
  ASSERT_NE(state, nullptr);
  ASSERT_EQ(state->links.size(), 2u);
  const LinkNetlinkStats& sim0 = state->links.at("sim0").netlink;
  ASSERT_TRUE(sim0.fec);
  EXPECT_EQ(sim0.fec->corrected_blocks[0], 9u);
  EXPECT_EQ(sim0.std_stats->fcs_errors, 2u);
  EXPECT_EQ(sim0.state->link_down_events, 1u);
  // sim1's kernel has none of the messages: an entry with every part absent, not an error.
  const LinkNetlinkStats& sim1 = state->links.at("sim1").netlink;
  EXPECT_FALSE(sim1.fec || sim1.std_stats || sim1.state);
  EXPECT_EQ(state->reads, 2u);
  for (const auto& [reason, count] : state->errors) EXPECT_EQ(count, 0u) << reason;
  EXPECT_DOUBLE_EQ(state->interval_seconds, 10);
}

TEST(LinkPoller, AFailedReadLeavesNoStaleEntryAndCountsItsReason) {
  Harness h;
  h.poller->PollOnce();
  h.io->failures["sim0"] = ENODEV;
  h.poller->PollOnce();
  auto state = h.poller->Latest();
  EXPECT_FALSE(state->links.contains("sim0"));
  EXPECT_TRUE(state->links.contains("sim1"));
  EXPECT_EQ(state->errors.at(std::string(ReasonName(ReasonOf(Error{ENODEV, ""})))), 1u);
}

TEST(LinkPoller, PreFecBerIsCorrectedOverReceivedBitsBetweenRounds) {
  Harness h;
  h.bits["sim0"] = {.corrected = 1000, .received = 1'000'000'000};
  h.poller->PollOnce();
  EXPECT_FALSE(h.poller->Latest()->links.at("sim0").pre_fec_ber);  // one point is no window
  h.bits["sim0"] = {.corrected = 1250, .received = 2'000'000'000};
  h.poller->PollOnce();
  auto ber = h.poller->Latest()->links.at("sim0").pre_fec_ber;
  ASSERT_TRUE(ber);
  EXPECT_DOUBLE_EQ(*ber, 250.0 / 1e9);
  EXPECT_FALSE(h.poller->Latest()->links.at("sim1").pre_fec_ber);  // no bit counters
}

TEST(LinkPoller, NoBerAcrossACounterResetOrAStillLink) {
  Harness h;
  h.bits["sim0"] = {.corrected = 500, .received = 9000};
  h.poller->PollOnce();
  h.bits["sim0"] = {.corrected = 10, .received = 100};  // reset: driver reload
  h.poller->PollOnce();
  EXPECT_FALSE(h.poller->Latest()->links.at("sim0").pre_fec_ber);
  h.poller->PollOnce();  // nothing received since: no ratio (not 0/0)
  EXPECT_FALSE(h.poller->Latest()->links.at("sim0").pre_fec_ber);
  h.bits["sim0"] = {.corrected = 10, .received = 1100};
  h.poller->PollOnce();
  EXPECT_EQ(h.poller->Latest()->links.at("sim0").pre_fec_ber, 0.0);
}

TEST(LinkPoller, ANetdevThatLeftTheSelectionIsDroppedWithItsHistory) {
  Harness h;
  h.bits["sim0"] = {.corrected = 0, .received = 100};
  h.poller->PollOnce();
  h.netdevs = {"sim1"};
  h.poller->PollOnce();
  EXPECT_FALSE(h.poller->Latest()->links.contains("sim0"));
  h.netdevs = {"sim0", "sim1"};
  h.bits["sim0"] = {.corrected = 5, .received = 200};
  h.poller->PollOnce();
  // Back in the selection: a new first point, not a window spanning its absence.
  EXPECT_FALSE(h.poller->Latest()->links.at("sim0").pre_fec_ber);
}

TEST(LinkPoller, TheThreadPublishesAndStops) {
  Harness h;
  h.poller->Start();  // first round immediately, the next after 10s: only one here
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!h.poller->Latest() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  h.poller->Stop();
  ASSERT_NE(h.poller->Latest(), nullptr);
  EXPECT_EQ(h.poller->Latest()->reads, 2u);
}

}  // namespace
}  // namespace roceqos
