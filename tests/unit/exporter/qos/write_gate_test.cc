#include "exporter/qos/write_gate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/unit/exporter/qos/remediate_fixture.h"

// The write gate (write_gate.cc, issue 37): each finding of the review as a named case. Every
// pass below was posted with a clean context; only the facts at the moment of the write differ.

namespace roceqos::remediate_test {
namespace {

using namespace std::chrono_literals;

// The ledger's file in memory.
class MemoryLedger : public LedgerStore {
 public:
  Result<PersistedState> Load() override {
    if (text_.empty()) return PersistedState{};
    return ParseRemediationState(text_, path_);
  }
  Result<void> Save(const PersistedState& state) override {
    text_ = SerializeRemediationState(state);
    return {};
  }
  const std::string& path() const override { return path_; }

 private:
  std::string text_;
  std::string path_ = "memory";
};

struct GateCase {
  FakeNic nic;
  Remediator r{Enforce(), &nic, nic.Facts()};
  GateCase() { nic.state.dcb.value.pfc->enabled_mask = 0; }
  RemediationState Step(TimePoint at = t0) {
    DeviceContext pci = UpPf();
    pci.identity = "pci:0000:08:00.0";
    return StepOnce(r, nic, at, nullptr, pci);
  }
};

TEST(WriteGate, Finding2AStormThatBeganAfterThePassWasPostedStopsTheWrite) {
  GateCase g;
  g.nic.storm = StormGuard::kStorm;
  EXPECT_EQ(g.Step(), RemediationState::kBlockedStorm);
  EXPECT_TRUE(g.nic.calls.empty());
  EXPECT_EQ(g.r.Status("pci:0000:08:00.0")->attempts, 0) << "a refused attempt is not counted";
  g.nic.storm = StormGuard::kClear;
  EXPECT_EQ(g.Step(t0 + 1s), RemediationState::kActed);
}

TEST(WriteGate, Finding6EvidenceOlderThanItsMaxAgeIsNoEvidence) {
  GateCase g;
  g.nic.clock = [] { return t0 - 2s; };  // an idle port's last read, 2 s before the write
  EXPECT_EQ(g.Step(), RemediationState::kBlockedUnknownStorm);
  EXPECT_TRUE(g.nic.calls.empty());
  g.nic.clock = [] { return t0 + 1s - 100ms; };
  EXPECT_EQ(g.Step(t0 + 1s), RemediationState::kActed);
}

TEST(WriteGate, Finding8ASwapOfNetdevNamesStopsTheWriteToTheOtherFunction) {
  GateCase g;
  g.nic.netdev_now = "sim1";  // the function planned as sim0 is sim1 now: sim0 is the other one
  EXPECT_EQ(g.Step(), RemediationState::kBlockedIdentityChanged);
  EXPECT_TRUE(g.nic.calls.empty());
  g.nic.netdev_now.reset();  // the function is gone
  EXPECT_EQ(g.Step(t0 + 1s), RemediationState::kBlockedIdentityChanged);
  EXPECT_TRUE(g.nic.calls.empty());
}

// Found by the enforce simulation (I6): mlx5_ib unloaded after the pass was planned with an
// rdma_device rule. The policy it was resolved with may not hold: nothing is written.
TEST(WriteGate, AnRdmaDeviceGoneSinceThePassWasPlannedStopsTheWrite) {
  GateCase g;
  g.nic.rdma_now = {};
  EXPECT_EQ(g.Step(), RemediationState::kBlockedIdentityChanged);
  EXPECT_TRUE(g.nic.calls.empty());
  g.nic.rdma_now = {"mlx5_2"};  // renamed: a rule naming mlx5_0 no longer matches
  EXPECT_EQ(g.Step(t0 + 1s), RemediationState::kBlockedIdentityChanged);
  EXPECT_TRUE(g.nic.calls.empty());
  g.nic.rdma_now = {"mlx5_0"};
  EXPECT_EQ(g.Step(t0 + 2s), RemediationState::kActed);
}

TEST(WriteGate, Finding9ALockFileReplacedUnderTheProcessStopsItsWritesForGood) {
  GateCase g;
  g.nic.lock_held = false;
  EXPECT_EQ(g.Step(), RemediationState::kBlockedLockLost);
  g.nic.lock_held = true;  // a new file at the path is not the lock this process took
  EXPECT_EQ(g.Step(t0 + 1h), RemediationState::kBlockedLockLost);
  EXPECT_TRUE(g.nic.calls.empty());
  EXPECT_EQ(g.r.suspended_reason(), "lock_lost");
}

TEST(WriteGate, Finding11TcpEcnHasOneLedgerEntryForTheHost) {
  FakeNic nic;
  nic.ignore_writes = true;  // something keeps setting tcp_ecn back
  nic.state.tcp_ecn = Observed<int>::Ok(0);
  RemediationOptions o = Enforce();
  o.max_attempts = 2;
  Remediator r(o, &nic, nic.Facts());
  for (int hour = 0; hour < 6; ++hour) {
    r.BeginPass();
    for (int device = 0; device < 4; ++device) {  // four PFs, one host
      DeviceContext c = UpPf();
      c.netdev = c.identity = "sim" + std::to_string(device);
      StepOnce(r, nic, t0 + std::chrono::hours(hour), nullptr, c);
    }
  }
  EXPECT_EQ(std::count(nic.calls.begin(), nic.calls.end(), "tcp_ecn 1"), 2)
      << "max_attempts for the host, not per device";
  EXPECT_TRUE(r.ledger().Get(std::string(kHostIdentity)).gave_up);
  EXPECT_EQ(r.ledger().Get("sim0").attempts, 0) << "the host's write is not the device's";
}

TEST(WriteGate, Finding12TheBackoffNeverOverflows) {
  EXPECT_EQ(BackoffAfter(1, 30s, 600s), 30s);
  EXPECT_EQ(BackoffAfter(3, 30s, 600s), 120s);
  EXPECT_EQ(BackoffAfter(1000000, 30s, 600s), 600s);
  const auto week = std::chrono::seconds(7 * 24 * 3600);
  EXPECT_EQ(BackoffAfter(100, week, week), week);
}

// Finding 1: a given-up device that stays drifted is still written nothing after a restart that
// comes hours later: its record's last_seen reaches the file while it is present.
TEST(WriteGate, Finding1AGiveUpSurvivesARestartAfterHoursOfDrift) {
  const std::string path = StatePath("hours");
  std::filesystem::remove(path);
  {
    RemediationStore store(path);
    GivenUp g(&store);
    for (int minute = 0; minute <= 180; minute += 5)  // drifted, given up, present
      EXPECT_EQ(StepOnce(g.r, g.nic, t0 + 1h + std::chrono::minutes(minute)),
                RemediationState::kGaveUp);
  }
  RemediationStore store(path);
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  TimePoint clock = t0 + 4h + 30min;
  Remediator r(Enforce(), &nic, nic.Facts(), &store, [&] { return clock; });
  r.Retain({}, clock);  // a pass before the device is listed again
  EXPECT_EQ(StepOnce(r, nic, clock), RemediationState::kGaveUp);
  EXPECT_TRUE(nic.calls.empty());
  std::filesystem::remove(path);
}

// Finding 7: the file's times are monotonic with their boot. Another boot's back-off keeps the
// wait it had left when saved; nothing depends on the wall clock.
TEST(WriteGate, Finding7TheLedgerDoesNotReadTheWallClock) {
  MemoryLedger store;
  PersistedState other_boot;
  other_boot.boot_id = "an-earlier-boot";
  other_boot.saved_at = 5000s;
  other_boot.devices["pci:0000:08:00.0"] = PersistedDevice{2, false, 5100s, false, 4000s, "sim0"};
  ASSERT_TRUE(store.Save(other_boot).ok());
  TimePoint clock = t0;
  Ledger ledger({.max_attempts = 5}, &store, "this-boot", [&] { return clock; });
  ledger.Load(t0);
  EXPECT_EQ(ledger.Check("pci:0000:08:00.0", t0 + 99s), Ledger::Verdict::kBackoff);
  EXPECT_EQ(ledger.Check("pci:0000:08:00.0", t0 + 100s), Ledger::Verdict::kAllowed);
  EXPECT_EQ(ledger.Get("pci:0000:08:00.0").attempts, 2);
  ledger.Retain({}, t0 + 59min);
  EXPECT_EQ(ledger.Get("pci:0000:08:00.0").attempts, 2) << "absence counts from this boot only";
}

}  // namespace
}  // namespace roceqos::remediate_test
