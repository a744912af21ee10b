#include "exporter/qos/remediate_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/exporter/qos/remediate_fixture.h"

// The state file (remediate_store.cc): attempts, back-off, give-up and applies in progress
// survive a restart.

namespace roceqos::remediate_test {
namespace {

using namespace std::chrono_literals;

TEST(StateFile, ACrashLoopCannotStepAroundMaxAttempts) {
  const std::string path = StatePath("crashloop");
  std::filesystem::remove(path);
  FakeNic nic;
  nic.ignore_writes = true;  // never holds
  nic.state.dcb.value.pfc->enabled_mask = 0;
  RemediationOptions o = Enforce();
  o.max_attempts = 3;
  o.base_backoff = 1s;
  int restarts = 0;
  RemediationState last{};
  for (; restarts < 10; ++restarts) {  // every process acts once, then "crashes"
    RemediationStore store(path);
    Remediator r(o, &nic, nic.Facts(), &store);
    const auto start = t0 + std::chrono::hours(restarts);
    // The restored back-off holds too: the first step of a new process may have to wait.
    for (int i = 0; i < 3; ++i) {
      last = StepOnce(r, nic, start + std::chrono::seconds(10 * i));
      if (last != RemediationState::kBackoff) break;
    }
    if (last == RemediationState::kGaveUp) break;
  }
  EXPECT_EQ(last, RemediationState::kGaveUp);
  EXPECT_EQ(restarts, 3);
  EXPECT_EQ(nic.calls.size(), 3u) << "three attempts across four processes, then nothing";
  std::filesystem::remove(path);
}

TEST(StateFile, TheApplyInProgressIsOnDiskBeforeTheFirstWriteAndClearedAfter) {
  const std::string path = StatePath("inprogress");
  std::filesystem::remove(path);
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  RemediationStore store(path);
  std::optional<PersistedState> at_write;
  nic.on_write = [&] { at_write = *store.Load(); };  // what a kill here would leave
  Remediator r(Enforce(), &nic, nic.Facts(), &store);
  StepOnce(r, nic, t0);
  ASSERT_TRUE(at_write.has_value());
  EXPECT_TRUE(at_write->devices.at("sim0").apply_in_progress);
  EXPECT_EQ(at_write->devices.at("sim0").attempts, 1);
  EXPECT_FALSE(store.Load()->devices.at("sim0").apply_in_progress);
  std::filesystem::remove(path);
}

TEST(StateFile, AStartAfterAKillMidApplySaysSoAndReplansFromAFreshRead) {
  const std::string path = StatePath("killed");
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;  // half-applied: ETS went out, PFC did not
  {
    RemediationStore store(path);
    PersistedState before;
    before.devices["sim0"] = PersistedDevice{1, false, std::nullopt, true, std::nullopt, ""};
    ASSERT_TRUE(store.Save(before).ok());
  }
  RemediationStore store(path);
  Remediator r(Enforce(), &nic, nic.Facts(), &store);
  ObservedQos stale = qos_test::DefaultPolicyObservation();  // an old observation says in sync
  stale.dcb.value.pfc->enabled_mask = 0x10;
  EXPECT_EQ(r.Step(UpPf(), kPolicy, stale, EvaluateDrift(kPolicy, stale), t0, nic.Reader()),
            RemediationState::kActed);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"set sim0 pfc=0x08"})) << "from the fresh read";
  EXPECT_TRUE(r.Status("sim0")->interrupted_apply) << "exported until the device reads in sync";
  EXPECT_EQ(r.Status("sim0")->attempts, 2) << "the interrupted apply counted";
  StepOnce(r, nic, t0 + 1s);
  EXPECT_FALSE(r.Status("sim0")->interrupted_apply);
  std::filesystem::remove(path);
}

TEST(StateFile, RoundTripsAndRejectsBadInput) {
  PersistedState state;
  state.boot_id = "6a1c-boot";
  state.saved_at = 5s;
  state.devices["pci:0000:3b:00.0"] =
      PersistedDevice{4, true, std::chrono::nanoseconds(1700000000123), false, 3s, "ens1f0np0"};
  state.devices["we\"ird"] = PersistedDevice{0, false, std::nullopt, true, std::nullopt, ""};
  state.devices[std::string(kHostIdentity)] = PersistedDevice{2, false, 40s, false, 4s, ""};
  auto parsed = ParseRemediationState(SerializeRemediationState(state), "f.json");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(*parsed, state);
  EXPECT_TRUE(ParseRemediationState(SerializeRemediationState({}), "f.json")->devices.empty());
  for (const char* bad :
       {"", "{", "[]", "{\"version\": 4, \"devices\": {}}", "{\"version\": 1}",
        "{\"version\": 3, \"devices\": {}}",  // no boot_id
        "{\"version\": 1, \"devices\": []}",
        "{\"version\": 1, \"devices\": {\"a\": {\"attempts\": 1}}}",
        "{\"version\": 3, \"boot_id\": \"b\", \"saved_at_ns\": -1, \"devices\": {}}",
        "{\"version\": 1, \"devices\": {\"a\": {\"policy_hash\": \"h\", \"attempts\": -1, "
        "\"gave_up\": false, \"apply_in_progress\": false}}}",
        "{\"version\": 1, \"devices\": {\"a\": {\"policy_hash\": \"h\", \"attempts\": \"x\", "
        "\"gave_up\": false, \"apply_in_progress\": false}}}"}) {
    auto r = ParseRemediationState(bad, "f.json");
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("f.json"), std::string::npos) << bad;
    }
  }
}

// Found by remediation_state_fuzz: a key holding NUL and invalid UTF-8 bytes parsed, but the
// file written from it did not parse back. A string the writer cannot round-trip is refused.
TEST(StateFile, RefusesStringsOutsidePrintableAscii) {
  const std::string device_body =
      "{\"attempts\": 1, \"gave_up\": false, \"apply_in_progress\": true}";
  auto file = [&](const std::string& key, const std::string& body) {
    return "{\"version\": 3, \"boot_id\": \"b\", \"saved_at_ns\": 1, \"devices\": {\"" + key +
           "\": " + body + "}}";
  };
  const std::string nul_and_bad_utf8("sim\0\xf0\x01\xa5m0", 8);
  for (const std::string& text :
       {file(nul_and_bad_utf8, device_body), file("sim\\u0001", device_body),
        file("pci:0000:3b:00.0",
             "{\"netdev\": \"s\\u0000\", \"attempts\": 1, \"gave_up\": false, "
             "\"apply_in_progress\": false}"),
        std::string("{\"version\": 3, \"boot_id\": \"b\\u007f\", \"saved_at_ns\": 1, "
                    "\"devices\": {}}")}) {
    auto parsed = ParseRemediationState(text, "f.json");
    EXPECT_FALSE(parsed.ok()) << text;
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.error().message.find('\0'), std::string::npos)
          << "no raw key in the message";
    }
  }
  auto fine = ParseRemediationState(file("pci:0000:3b:00.0", device_body), "f.json");
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ(ParseRemediationState(SerializeRemediationState(*fine), "again").value(), *fine);
}

// Without its history enforce cannot keep the max-attempts promise: it observes for the rest of
// the process and says why. The file is left for a human to look at.
TEST(StateFile, AnUnreadableFileSuspendsEnforceInsteadOfStartingEmpty) {
  const std::string path = StatePath("truncated");
  const std::string text = "{\"version\": 2, \"devices\": {\"sim0\": {\"policy_";
  std::ofstream(path) << text;
  RemediationStore store(path);
  EXPECT_FALSE(store.Load().ok());
  ExpectEnforceSuspendedWithoutWrites(store, "state_unreadable");
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), text);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace roceqos::remediate_test
