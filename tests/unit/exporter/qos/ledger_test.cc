#include "exporter/qos/ledger.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/exporter/qos/remediate_fixture.h"

// The ledger (ledger.cc): rate limit, back-off and give-up (no tight loop), and failing closed:
// every way around max-attempts that a review found, each with its guard.

namespace roceqos::remediate_test {
namespace {

using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// Rate limit, back-off, give-up: no tight loop.

TEST(Backoff, AttemptsDoubleTheirSpacingThenGiveUp) {
  FakeNic nic;
  nic.ignore_writes = true;  // something undoes every write at once
  nic.state.dcb.value.pfc->enabled_mask = 0;
  Remediator r(Enforce(), &nic, nic.Facts());  // base 30 s, cap 600 s, 5 attempts
  RemediationState last{};
  for (int s = 0; s <= 3 * 3600; ++s) last = StepOnce(r, nic, t0 + std::chrono::seconds(s));
  const auto* st = r.Status("sim0");
  std::vector<int64_t> at;
  for (auto t : st->attempt_times)
    at.push_back(std::chrono::duration_cast<std::chrono::seconds>(t - t0).count());
  EXPECT_EQ(at, (std::vector<int64_t>{0, 30, 90, 210, 450}));
  EXPECT_EQ(nic.calls.size(), 5u);  // one write per attempt, never more
  EXPECT_EQ(last, RemediationState::kGaveUp);
  EXPECT_EQ(st->counts.at({QosField::kPfc, "mismatch"}), 5u);
}

TEST(Backoff, WaitIsCappedAtMaxBackoff) {
  FakeNic nic;
  nic.ignore_writes = true;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  RemediationOptions o = Enforce();
  o.base_backoff = 100s;
  o.max_backoff = 300s;
  o.max_attempts = 6;
  Remediator r(o, &nic, nic.Facts());
  for (int s = 0; s <= 7200; s += 10) StepOnce(r, nic, t0 + std::chrono::seconds(s));
  std::vector<int64_t> at;
  for (auto t : r.Status("sim0")->attempt_times)
    at.push_back(std::chrono::duration_cast<std::chrono::seconds>(t - t0).count());
  EXPECT_EQ(at, (std::vector<int64_t>{0, 100, 300, 600, 900, 1200}));
}

TEST(Backoff, ChangeThatKeepsBeingUndoneEndsInGiveUp) {
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  Remediator r(Enforce(), &nic, nic.Facts());
  int undone = 0;
  RemediationState last{};
  for (int s = 0; s <= 7200; ++s) {
    // The switch's DCBX puts PFC back off a minute after every fix.
    if (nic.state.dcb.value.pfc->enabled_mask == 0x08 && s % 60 == 0) {
      nic.state.dcb.value.pfc->enabled_mask = 0;
      ++undone;
    }
    last = StepOnce(r, nic, t0 + std::chrono::seconds(s));
  }
  EXPECT_EQ(last, RemediationState::kGaveUp);
  EXPECT_EQ(r.Status("sim0")->counts.at({QosField::kPfc, "success"}), 5u);
  EXPECT_EQ(undone, 5);
  EXPECT_EQ(nic.calls.size(), 5u);
}

TEST(Backoff, GiveUpEndsOnlyWhenTheDeviceProvesStableNotWhenThePolicyChanges) {
  FakeNic nic;
  nic.ignore_writes = true;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  RemediationOptions o = Enforce();
  o.max_attempts = 1;
  Remediator r(o, &nic, nic.Facts());
  StepOnce(r, nic, t0);
  EXPECT_EQ(StepOnce(r, nic, t0 + 1h), RemediationState::kGaveUp);
  // Blocked or not, a given-up device stays visibly given up.
  DeviceContext down = UpPf();
  down.oper_up = false;
  EXPECT_EQ(StepOnce(r, nic, t0 + 2h, nullptr, down), RemediationState::kGaveUp);

  // The same effective policy again (a reload of an unchanged file): still given up.
  EXPECT_EQ(StepOnce(r, nic, t0 + 150min), RemediationState::kGaveUp);
  // Finding 5 of issue 37: another policy, and back (A->B->A), grants no fresh attempts: the
  // ledger is keyed by the PCI function, not by the policy.
  QosPolicy other = kPolicy;
  other.pfc = 0x18;
  ObservedQos observed = nic.state;
  EXPECT_EQ(r.Step(UpPf(), other, observed, EvaluateDrift(other, observed), t0 + 3h, nic.Reader()),
            RemediationState::kGaveUp);
  EXPECT_EQ(StepOnce(r, nic, t0 + 4h + 1s), RemediationState::kGaveUp) << "and back";
  EXPECT_EQ(nic.calls.size(), 1u) << "the first attempt only";

  nic.state.dcb.value.pfc->enabled_mask = 0x08;  // a human fixed it
  EXPECT_EQ(StepOnce(r, nic, t0 + 5h), RemediationState::kInSync);
  EXPECT_TRUE(r.Status("sim0")->gave_up) << "one in-sync read proves nothing yet";
  EXPECT_EQ(StepOnce(r, nic, t0 + 6h), RemediationState::kInSync);
  EXPECT_FALSE(r.Status("sim0")->gave_up) << "fully in sync for stable_reset";
  nic.state.dcb.value.pfc->enabled_mask = 0;
  EXPECT_EQ(StepOnce(r, nic, t0 + 6h + 1s), RemediationState::kActed);
}

TEST(Backoff, AttemptsStartOverAfterAStablePeriod) {
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  RemediationOptions o = Enforce();
  o.max_attempts = 2;
  o.stable_reset = 3600s;
  Remediator r(o, &nic, nic.Facts());
  EXPECT_EQ(StepOnce(r, nic, t0), RemediationState::kActed);
  EXPECT_EQ(StepOnce(r, nic, t0 + 1s), RemediationState::kInSync);
  EXPECT_EQ(StepOnce(r, nic, t0 + 3602s), RemediationState::kInSync);  // stable for an hour
  nic.state.dcb.value.pfc->enabled_mask = 0;
  EXPECT_EQ(StepOnce(r, nic, t0 + 3700s), RemediationState::kActed);
  EXPECT_EQ(r.Status("sim0")->attempts, 1);
}

// ---------------------------------------------------------------------------------------------
// Fail closed: every way around max-attempts that a review found, each with its guard.

TEST(FailClosed, GiveUpSurvivesTheDeviceVanishingAndComingBackUnderAnotherName) {
  GivenUp g;
  for (int minute = 1; minute <= 30; ++minute)  // a driver reload, a firmware reset loop
    g.r.Retain({}, t0 + 1h + std::chrono::minutes(minute));
  DeviceContext back = UpPf();
  back.netdev = "sim7";  // renamed; same PCI function
  EXPECT_EQ(StepOnce(g.r, g.nic, t0 + 2h, nullptr, back), RemediationState::kGaveUp);
  EXPECT_TRUE(g.nic.calls.empty());
}

TEST(FailClosed, AVanishedDeviceIsForgottenOnlyAfterForgetAfter) {
  GivenUp g;  // last seen at t0 + 1h
  g.r.Retain({}, t0 + 1h + 59min);
  ASSERT_NE(g.r.Status("sim0"), nullptr) << "kept for at least an hour";
  g.r.Retain({"sim1"}, t0 + 2h + 1min);
  EXPECT_EQ(g.r.Status("sim0"), nullptr);
}

TEST(FailClosed, GiveUpSurvivesARestartWhileTheDeviceIsAway) {
  const std::string path = StatePath("away");
  std::filesystem::remove(path);
  {
    RemediationStore store(path);
    GivenUp g(&store);
    g.r.Retain({}, t0 + 1h + 10min);  // the device missed passes; the file keeps its record
  }
  RemediationStore store(path);
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  Remediator r(Enforce(), &nic, nic.Facts(), &store);
  EXPECT_EQ(StepOnce(r, nic, t0 + 3h), RemediationState::kGaveUp);
  EXPECT_TRUE(nic.calls.empty());
  std::filesystem::remove(path);
}

TEST(FailClosed, AVersion1FileKeyedByNetdevStillHoldsTheGiveUp) {
  const std::string path = StatePath("v1");
  std::ofstream(path) << "{\"version\": 1, \"devices\": {\"sim0\": {\"policy_hash\": \"h\", "
                         "\"attempts\": 5, \"gave_up\": true, \"next_allowed_unix\": null, "
                         "\"apply_in_progress\": false}}}";
  RemediationStore store(path);
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  Remediator r(Enforce(), &nic, nic.Facts(), &store);
  DeviceContext pci = UpPf();
  pci.identity = "pci:0000:08:00.0";
  EXPECT_EQ(StepOnce(r, nic, t0, nullptr, pci), RemediationState::kGaveUp);
  EXPECT_TRUE(nic.calls.empty());
  std::filesystem::remove(path);
}

TEST(FailClosed, EditingAnObserveOnlyFieldDoesNotResetGiveUp) {
  GivenUp g;
  QosPolicy edited = kPolicy;
  edited.mtu = 9000;
  edited.link_speed_min_mbps = 100000;
  ObservedQos observed = g.nic.state;
  EXPECT_EQ(
      g.r.Step(UpPf(), edited, observed, EvaluateDrift(edited, observed), t0 + 2h, g.nic.Reader()),
      RemediationState::kGaveUp);
  EXPECT_TRUE(g.nic.calls.empty());
}

TEST(FailClosed, AnAbsentFieldDoesNotEndGiveUp) {
  GivenUp g;
  g.nic.state.dcb.value.pfc->enabled_mask = 0x08;
  for (int p = 0; p < kNumPriorities; ++p)  // the DCQCN sysfs is gone during a driver reload
    g.nic.state.dcqcn.np_enabled[p] = Observed<bool>::Absent();
  ASSERT_TRUE(EvaluateDrift(kPolicy, g.nic.state).InSync());
  EXPECT_EQ(StepOnce(g.r, g.nic, t0 + 2h), RemediationState::kInSync);
  EXPECT_EQ(StepOnce(g.r, g.nic, t0 + 5h), RemediationState::kInSync);
  EXPECT_TRUE(g.r.Status("sim0")->gave_up) << "in sync with a field absent proves nothing";
  g.nic.state = Good();
  EXPECT_EQ(StepOnce(g.r, g.nic, t0 + 6h), RemediationState::kInSync);
  EXPECT_TRUE(g.r.Status("sim0")->gave_up) << "fully in sync, but not for stable_reset yet";
  EXPECT_EQ(StepOnce(g.r, g.nic, t0 + 7h), RemediationState::kInSync);
  EXPECT_FALSE(g.r.Status("sim0")->gave_up);
}

TEST(FailClosed, AnUnresolvedPolicyWritesNothingAndKeepsTheGiveUp) {
  GivenUp g;
  DeviceContext unresolved = UpPf();
  unresolved.policy_resolved = false;
  QosPolicy fallback = kPolicy;  // the defaults a rdma_device rule could not be matched against
  fallback.pfc = 0x18;
  ObservedQos observed = g.nic.state;
  EXPECT_EQ(g.r.Step(unresolved, fallback, observed, EvaluateDrift(fallback, observed), t0 + 3h,
                     g.nic.Reader()),
            RemediationState::kBlockedPolicyUnresolved);
  EXPECT_TRUE(g.nic.calls.empty());
  EXPECT_EQ(StepOnce(g.r, g.nic, t0 + 4h), RemediationState::kGaveUp)
      << "the rule resolves again: same written fields, still given up";
}

// Issue 37, findings 3 and 13: through ResolveChecked, not a hand-set flag. An rdma_device rule
// whose PF lost its RDMA port (rmmod mlx5_ib) leaves the device unresolved: nothing written, and
// its give-up is kept for when the port is back.
TEST(FailClosed, AnRdmaRuleWhosePortVanishedWritesNothingAndKeepsTheGiveUp) {
  auto set = ParsePolicy(
      "devices:\n  - name: rdma\n    match: {rdma_device: mlx5_0}\n"
      "    policy: {pfc: [3]}\n",
      "rdma.yaml");
  ASSERT_TRUE(set.ok()) << set.error().message;
  Device device;
  device.name = "sim0";
  device.pci_vendor = 0x15b3;
  device.role = DeviceRole::kPf;  // listed, with no RDMA port
  const PolicyResolution resolution = set->ResolveChecked(device);
  GivenUp g;
  DeviceContext context = UpPf();
  context.policy_resolved = resolution.resolved;
  ObservedQos observed = g.nic.state;
  EXPECT_EQ(g.r.Step(context, *resolution.policy, observed,
                     EvaluateDrift(*resolution.policy, observed), t0 + 3h, g.nic.Reader()),
            RemediationState::kBlockedPolicyUnresolved);
  EXPECT_TRUE(g.nic.calls.empty());
  EXPECT_EQ(StepOnce(g.r, g.nic, t0 + 4h), RemediationState::kGaveUp) << "the port is back";
}

TEST(FailClosed, AnUnwritableStateDirectorySuspendsEnforceAtStart) {
  const std::string blocker = StatePath("blocker");
  std::ofstream(blocker) << "a file where a directory should be";
  RemediationStore store(blocker + "/sub/remediation.json");
  ExpectEnforceSuspendedWithoutWrites(store, "state_unwritable");
  std::filesystem::remove(blocker);
}

TEST(FailClosed, AStateFileThatCannotBeSavedStopsTheWrites) {
  const std::string path = StatePath("unsaveable");
  std::filesystem::remove(path);
  RemediationStore store(path);
  FakeNic nic;
  Remediator r(Enforce(), &nic, nic.Facts(), &store);
  ASSERT_EQ(r.suspended_reason(), "") << "the start-up save worked";
  ASSERT_TRUE(std::filesystem::exists(path)) << "written at start, before any device";
  std::filesystem::create_directory(path + ".tmp");  // the next save fails
  nic.state.dcb.value.pfc->enabled_mask = 0;
  EXPECT_EQ(StepOnce(r, nic, t0), RemediationState::kBlockedStateUnavailable);
  EXPECT_EQ(StepOnce(r, nic, t0 + 1h), RemediationState::kBlockedStateUnavailable);
  EXPECT_TRUE(nic.calls.empty());
  EXPECT_EQ(r.suspended_reason(), "state_unwritable");
  std::filesystem::remove(path + ".tmp");
  std::filesystem::remove(path);
}

TEST(FailClosed, ASymlinkPlantedAtTheTemporaryFileIsNotFollowed) {
  const std::string path = StatePath("symlink");
  const std::string victim = StatePath("victim");
  std::ofstream(victim) << "keep";
  std::filesystem::remove(path + ".tmp");
  std::filesystem::create_symlink(victim, path + ".tmp");
  RemediationStore store(path);
  ASSERT_TRUE(store.Save(PersistedState{}).ok());
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep");
  EXPECT_TRUE(store.Load().ok());
  std::filesystem::remove(victim);
  std::filesystem::remove(path);
}

TEST(FailClosed, TheStateParserNeverThrowsAndClampsTimes) {
  for (const char* bad :
       {"{\"version\": 2, \"devices\": {[1]: {}}}", "{\"version\": [2], \"devices\": {}}",
        "{\"version\": 2, \"devices\": {\"a\": {\"attempts\": [1], "
        "\"gave_up\": false, \"apply_in_progress\": false}}}",
        "{\"version\": 3, \"boot_id\": \"b\", \"saved_at_ns\": 1, \"devices\": {\"a\": "
        "{\"attempts\": 1, \"gave_up\": false, \"apply_in_progress\": false, "
        "\"next_allowed_ns\": {}}}}",
        "{\"version\": 2, \"devices\": {\"a\": {\"attempts\": 1e99, "
        "\"gave_up\": false, \"apply_in_progress\": false}}}",
        "\xff\xfe{"}) {
    Result<PersistedState> parsed = PersistedState{};
    EXPECT_NO_THROW(parsed = ParseRemediationState(bad, "f.json")) << bad;
    EXPECT_FALSE(parsed.ok()) << bad;
  }
  auto far = ParseRemediationState(
      "{\"version\": 3, \"boot_id\": \"b\", \"saved_at_ns\": 1, \"devices\": {\"sim0\": "
      "{\"attempts\": 1, \"gave_up\": false, \"apply_in_progress\": false, "
      "\"next_allowed_ns\": 9223372036854775807}}}",
      "f.json");
  ASSERT_TRUE(far.ok()) << far.error().message;
  EXPECT_EQ(*far->devices.at("sim0").next_allowed, kMaxPersistedMonotonic);
}

// The file of this boot, its back-off set far beyond any the options allow (a hand edit).
TEST(FailClosed, ARestoredBackoffIsNeverLongerThanMaxBackoff) {
  const std::string path = StatePath("farfuture");
  PersistedState state;
  state.boot_id = CurrentBootId();
  state.devices["sim0"] =
      PersistedDevice{1, false, kMaxPersistedMonotonic, false, std::nullopt, ""};
  ASSERT_TRUE(RemediationStore(path).Save(state).ok());
  RemediationStore store(path);
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  RemediationOptions o = Enforce();
  o.max_backoff = 600s;
  TimePoint clock = t0;
  Remediator r(o, &nic, nic.Facts(), &store, [&] { return clock; });
  EXPECT_EQ(StepOnce(r, nic, t0), RemediationState::kBackoff);
  clock = t0 + 601s;
  EXPECT_EQ(StepOnce(r, nic, t0 + 601s), RemediationState::kActed);
  std::filesystem::remove(path);
}

TEST(FailClosed, TheBufferIsPlannedFromAReadTakenAfterThePfcChange) {
  FakeNic nic;
  QosPolicy policy = kPolicy;
  policy.buffer = BufferPolicy{{0, 0, 0, 1, 1, 0, 0, 0}, std::nullopt};  // sizes unset
  nic.state.dcb.value.pfc->enabled_mask = 0;
  nic.after_pfc = [](QosState& s) { s.buffer->size = {98304, 163584, 0, 0, 0, 0, 0, 0}; };
  Remediator r(Enforce(), &nic, nic.Facts());
  ObservedQos observed = nic.state;
  EXPECT_EQ(r.Step(UpPf(), policy, observed, EvaluateDrift(policy, observed), t0, nic.Reader()),
            RemediationState::kActed);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"set sim0 pfc=0x08", "set sim0 buffer"}));
  ASSERT_EQ(nic.buffers_sent.size(), 1u);
  EXPECT_EQ(nic.buffers_sent[0].size, (std::array<uint32_t, 8>{98304, 163584, 0, 0, 0, 0, 0, 0}))
      << "the sizes the PFC change left, not the ones read before it";
  EXPECT_EQ(nic.buffers_sent[0].prio_buffer, policy.buffer->prio_buffer);
}

}  // namespace
}  // namespace roceqos::remediate_test
