#include "exporter/qos/remediate_apply.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/exporter/qos/remediate_fixture.h"

// Writes (remediate_apply.cc): one read per plan, DCB parts in one message, stop at the first
// failure, exact report, the pass budget.

namespace roceqos::remediate_test {
namespace {

using namespace std::chrono_literals;

TEST(Writes, DcbPartsGoOutInOneMessageBuiltFromOneFreshRead) {
  QosPolicy policy = kPolicy;
  policy.prio_tc = std::array<uint8_t, 8>{1, 0, 2, 3, 4, 5, 6, 7};  // as the NIC has it
  FakeNic nic;
  ObservedQos stale = nic.state;  // what the last poll saw: only PFC drifted
  stale.dcb.value.pfc->enabled_mask = 0;
  // Since then the ETS map drifted too, and PFC is still off: the write must cover the device
  // as it is now, not as the poll saw it.
  nic.state.dcb.value.pfc->enabled_mask = 0;
  nic.state.dcb.value.ets->prio_tc = {0, 1, 2, 3, 4, 5, 6, 7};
  Remediator r(Enforce(), &nic, nic.Facts());
  std::vector<ActionRecord> records;
  std::optional<ObservedQos> after;
  EXPECT_EQ(r.Step(UpPf(), policy, stale, EvaluateDrift(policy, stale), t0, nic.Reader(), &records,
                   &after),
            RemediationState::kActed);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"set sim0 ets pfc=0x08"}));
  EXPECT_EQ(nic.reads, 2) << "one read to plan from, one to verify; the caller reuses the last";
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(EvaluateDrift(policy, *after).InSync());
  ASSERT_EQ(records.size(), 2u);
  for (const auto& rec : records) EXPECT_EQ(rec.result, kResultSuccess) << rec.description;
}

TEST(Writes, DriftGoneByThePlanReadWritesNothing) {
  FakeNic nic;
  ObservedQos stale = nic.state;
  stale.dcb.value.pfc->enabled_mask = 0;  // someone fixed it since the poll
  Remediator r(Enforce(), &nic, nic.Facts());
  EXPECT_EQ(r.Step(UpPf(), kPolicy, stale, EvaluateDrift(kPolicy, stale), t0, nic.Reader()),
            RemediationState::kInSync);
  EXPECT_TRUE(nic.calls.empty());
  EXPECT_EQ(r.Status("sim0")->attempts, 0);
}

TEST(Writes, StopAtTheFirstFailureAndReportExactlyWhichPartsApplied) {
  FakeNic nic;
  nic.pfc_part_fails = true;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  nic.state.dcb.value.ets->prio_tc = {0, 1, 2, 3, 4, 5, 6, 7};
  nic.state.tcp_ecn = Observed<int>::Ok(0);
  QosPolicy policy = kPolicy;
  policy.prio_tc = std::array<uint8_t, 8>{1, 0, 2, 3, 4, 5, 6, 7};
  Remediator r(Enforce(), &nic, nic.Facts());
  std::vector<ActionRecord> records;
  ObservedQos observed = nic.state;
  r.Step(UpPf(), policy, observed, EvaluateDrift(policy, observed), t0, nic.Reader(), &records);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"set sim0 ets pfc=0x08"}))
      << "tcp_ecn is not written after the DCB write failed";
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].field, QosField::kPrioTc);
  EXPECT_EQ(records[0].result, kResultSuccess) << "applied before the kernel stopped";
  EXPECT_NE(records[0].error.find("applied before"), std::string::npos);
  EXPECT_EQ(records[1].field, QosField::kPfc);
  EXPECT_EQ(records[1].result, kResultFailed);
  EXPECT_EQ(records[2].field, QosField::kTcpEcn);
  EXPECT_EQ(records[2].result, kResultSkipped);
  EXPECT_EQ(r.Status("sim0")->counts.at({QosField::kTcpEcn, "skipped"}), 1u);
}

TEST(Writes, HostWideTcpEcnIsWrittenOncePerPass) {
  FakeNic nic;
  nic.state.tcp_ecn = Observed<int>::Ok(0);
  Remediator r(Enforce(), &nic, nic.Facts());
  r.BeginPass();
  DeviceContext second = UpPf();
  second.netdev = "sim1";
  second.identity = "sim1";
  StepOnce(r, nic, t0);
  nic.state.tcp_ecn = Observed<int>::Ok(0);  // as both devices saw it at the poll
  StepOnce(r, nic, t0, nullptr, second);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"tcp_ecn 1"}));
  r.BeginPass();
  StepOnce(r, nic, t0 + 1h, nullptr, second);
  EXPECT_EQ(nic.calls.size(), 2u) << "the next pass may write it again";
}

// Guard: an apply cannot keep its thread busy past the budget plus one write. The rest goes out
// at a later pass; the attempt counts, since the PFC part (a link flap on mlx5) already went out:
// an agent that undoes PFC between passes must not get it rewritten every pass.
TEST(Writes, ApplyBudgetDefersTheRestAndTheAttemptCounts) {
  FakeNic nic;
  auto clock = Remediator::Clock::time_point(1h);
  nic.on_write = [&] { clock += 2s; };  // a slow device: two seconds a write
  nic.state.dcb.value.pfc->enabled_mask = 0;
  nic.state.tcp_ecn = Observed<int>::Ok(0);
  RemediationOptions o = Enforce();
  o.apply_budget = 1s;
  Remediator r(o, &nic, nic.Facts(), nullptr, [&] { return clock; });
  r.BeginPass();
  std::vector<ActionRecord> records;
  EXPECT_EQ(StepOnce(r, nic, t0, &records), RemediationState::kActed);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"set sim0 pfc=0x08"}));
  ASSERT_EQ(records.size(), 1u) << "the deferred tcp_ecn write is neither success nor failure";
  EXPECT_EQ(r.Status("sim0")->attempts, 1) << "a write reached the device";
  DeviceContext second = UpPf();
  second.netdev = "sim1";
  second.identity = "sim1";
  EXPECT_EQ(StepOnce(r, nic, t0, nullptr, second), RemediationState::kBackoff)
      << "the pass budget is spent: no read, no write for the next device";
  EXPECT_EQ(nic.calls.size(), 1u);
  r.BeginPass();
  EXPECT_EQ(StepOnce(r, nic, t0 + 1s), RemediationState::kBackoff) << "the back-off holds";
  r.BeginPass();
  EXPECT_EQ(StepOnce(r, nic, t0 + 31s), RemediationState::kActed);
  EXPECT_EQ(nic.calls.back(), "tcp_ecn 1");
}

// An agent that undoes PFC after every pass, with a budget that always cuts the apply short:
// the writes are still bounded by max_attempts.
TEST(Writes, AWriteCutShortByTheBudgetCannotBeRepeatedWithoutBound) {
  FakeNic nic;
  auto clock = Remediator::Clock::time_point(1h);
  nic.on_write = [&] { clock += 2s; };
  nic.state.tcp_ecn = Observed<int>::Ok(0);
  RemediationOptions o = Enforce();
  o.apply_budget = 1s;
  o.max_attempts = 3;
  o.base_backoff = 1s;
  o.max_backoff = 1s;
  Remediator r(o, &nic, nic.Facts(), nullptr, [&] { return clock; });
  for (int pass = 0; pass < 50; ++pass) {
    nic.state.dcb.value.pfc->enabled_mask = 0;  // the agent
    nic.state.tcp_ecn = Observed<int>::Ok(0);
    r.BeginPass();
    StepOnce(r, nic, t0 + std::chrono::seconds(10 * pass));
  }
  EXPECT_EQ(std::count(nic.calls.begin(), nic.calls.end(), "set sim0 pfc=0x08"), 3);
  EXPECT_TRUE(r.Status("sim0")->gave_up);
}

}  // namespace
}  // namespace roceqos::remediate_test
