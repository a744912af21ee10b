#include "exporter/qos/remediate.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <linux/dcbnl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/exporter/qos/remediate_fixture.h"

// The remediation state machine (remediate.cc): the guardrails, enforce (plan from a fresh read,
// write, verify, count), dry-run, the modes and the CAP_NET_ADMIN check.

namespace roceqos::remediate_test {
namespace {

using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// Guardrails

TEST(Guardrails, OnlyUpPhysicalFunctionsOutsideBondsStormsAndDriverLoads) {
  EXPECT_EQ(CheckGuardrails(UpPf()), std::nullopt);
  struct Case {
    const char* name;
    std::function<void(DeviceContext&)> change;
    RemediationState expected;
  };
  for (const Case& c : std::vector<Case>{
           {"vf", [](DeviceContext& x) { x.role = DeviceRole::kVf; },
            RemediationState::kBlockedNotPf},
           {"other", [](DeviceContext& x) { x.role = DeviceRole::kOther; },
            RemediationState::kBlockedNotPf},
           {"bond member", [](DeviceContext& x) { x.role = DeviceRole::kBondMember; },
            RemediationState::kBlockedBond},
           {"bond master", [](DeviceContext& x) { x.role = DeviceRole::kBond; },
            RemediationState::kBlockedBond},
           {"lag device", [](DeviceContext& x) { x.rdma_devices = {"mlx5_bond_0"}; },
            RemediationState::kBlockedBond},
           {"down", [](DeviceContext& x) { x.oper_up = false; }, RemediationState::kBlockedDown},
           {"driver", [](DeviceContext& x) { x.driver_ready = false; },
            RemediationState::kBlockedDriverNotReady},
           {"storm", [](DeviceContext& x) { x.storm = StormGuard::kStorm; },
            RemediationState::kBlockedStorm},
           {"storm unknown", [](DeviceContext& x) { x.storm = StormGuard::kUnknown; },
            RemediationState::kBlockedUnknownStorm},
           {"policy unresolved", [](DeviceContext& x) { x.policy_resolved = false; },
            RemediationState::kBlockedPolicyUnresolved},
       }) {
    DeviceContext ctx = UpPf();
    c.change(ctx);
    EXPECT_EQ(CheckGuardrails(ctx), c.expected) << c.name;
  }
}

TEST(Guardrails, BlockedDevicesAreNeverWritten) {
  for (auto change : std::vector<std::function<void(DeviceContext&)>>{
           [](DeviceContext& x) { x.role = DeviceRole::kBondMember; },
           [](DeviceContext& x) { x.rdma_devices = {"mlx5_bond_0"}; },
           [](DeviceContext& x) { x.oper_up = false; },
           [](DeviceContext& x) { x.storm = StormGuard::kStorm; },
           [](DeviceContext& x) { x.storm = StormGuard::kUnknown; },
           [](DeviceContext& x) { x.policy_resolved = false; },
           [](DeviceContext& x) { x.driver_ready = false; },
           [](DeviceContext& x) { x.role = DeviceRole::kVf; }}) {
    FakeNic nic;
    nic.state.dcb.value.pfc->enabled_mask = 0;
    Remediator r(Enforce(), &nic, nic.Facts());
    DeviceContext ctx = UpPf();
    change(ctx);
    nic.storm = ctx.storm;  // what the gate finds at the write agrees with the pass
    for (int i = 0; i < 10; ++i) StepOnce(r, nic, t0 + i * 1h, nullptr, ctx);
    EXPECT_TRUE(nic.calls.empty());
    EXPECT_EQ(nic.state.dcb.value.pfc->enabled_mask, 0);
  }
}

TEST(Guardrails, StormDefersTheWriteUntilItEnds) {
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  Remediator r(Enforce(), &nic, nic.Facts());
  DeviceContext storm = UpPf();
  storm.storm = StormGuard::kStorm;
  EXPECT_EQ(StepOnce(r, nic, t0, nullptr, storm), RemediationState::kBlockedStorm);
  EXPECT_TRUE(nic.calls.empty());
  EXPECT_EQ(StepOnce(r, nic, t0 + 5s), RemediationState::kActed);
  EXPECT_EQ(nic.state.dcb.value.pfc->enabled_mask, 0x08);
}

// ---------------------------------------------------------------------------------------------
// Enforce, verify, count

TEST(Enforce, CnpDriftIsRewrittenAndVerified) {
  FakeNic nic;
  nic.state.dcqcn.cnp_dscp = Observed<uint8_t>::Ok(0);
  Remediator r(Enforce(), &nic, nic.Facts());
  std::vector<ActionRecord> records;
  EXPECT_EQ(StepOnce(r, nic, t0, &records), RemediationState::kActed);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"param sim0 np cnp_dscp 48"}));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].field, QosField::kCnpDscp);
  EXPECT_EQ(records[0].result, kResultSuccess);
  EXPECT_TRUE(EvaluateDrift(kPolicy, nic.state).InSync());
}

TEST(Enforce, CnpWriteThatDoesNotTakeIsAMismatch) {
  FakeNic nic;
  nic.state.dcqcn.cnp_802p_prio = Observed<uint8_t>::Ok(0);
  nic.ignore_writes = true;
  Remediator r(Enforce(), &nic, nic.Facts());
  std::vector<ActionRecord> records;
  StepOnce(r, nic, t0, &records);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].field, QosField::kCnpPrio);
  EXPECT_EQ(records[0].result, kResultMismatch);
}

TEST(Enforce, CnpWithoutMofedSysfsIsNeverWritten) {
  FakeNic nic;
  nic.state.dcqcn = DcqcnState{};  // upstream mlx5: no ecn/ at all
  Remediator r(Enforce(), &nic, nic.Facts());
  EXPECT_EQ(StepOnce(r, nic, t0), RemediationState::kInSync);
  EXPECT_TRUE(nic.calls.empty());
}

TEST(Enforce, DcqcnParamsAreRewrittenOnePerDriftedFile) {
  QosPolicy policy = kPolicy;
  policy.dcqcn_rp_params = {{"rpg_ai_rate", 5}, {"rpg_time_reset", 300}};
  policy.dcqcn_np_params = {{"min_time_between_cnps", 4}};
  FakeNic nic;
  DcqcnParams params;
  params.reaction_point = {{"rpg_ai_rate", 1}, {"rpg_time_reset", 300}};
  params.notification_point = {{"min_time_between_cnps", 0}};
  nic.state.dcqcn_params = Observed<DcqcnParams>::Ok(params);
  Remediator r(Enforce(), &nic, nic.Facts());
  std::vector<ActionRecord> records;
  ObservedQos observed = nic.state;
  EXPECT_EQ(
      r.Step(UpPf(), policy, observed, EvaluateDrift(policy, observed), t0, nic.Reader(), &records),
      RemediationState::kActed);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"param sim0 rp rpg_ai_rate 5",
                                                 "param sim0 np min_time_between_cnps 4"}));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].field, QosField::kDcqcnParams);
  EXPECT_EQ(records[0].result, kResultSuccess);
  EXPECT_EQ(records[0].description, "dcqcn_params: ecn/roce_rp/rpg_ai_rate=1 -> 5");
  EXPECT_TRUE(EvaluateDrift(policy, nic.state).InSync());
}

TEST(Enforce, DcqcnParamsWithoutMofedAreNeverWritten) {
  QosPolicy policy = kPolicy;
  policy.dcqcn_rp_params = {{"rpg_ai_rate", 5}};
  FakeNic nic;  // dcqcn_params absent: the upstream driver
  Remediator r(Enforce(), &nic, nic.Facts());
  ObservedQos observed = nic.state;
  EXPECT_EQ(r.Step(UpPf(), policy, observed, EvaluateDrift(policy, observed), t0, nic.Reader()),
            RemediationState::kInSync);
  EXPECT_TRUE(nic.calls.empty());
}

TEST(Enforce, WritesVerifiesAndCountsSuccess) {
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  nic.state.tcp_ecn = Observed<int>::Ok(0);
  Remediator r(Enforce(), &nic, nic.Facts());
  std::vector<ActionRecord> records;
  EXPECT_EQ(StepOnce(r, nic, t0, &records), RemediationState::kActed);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"set sim0 pfc=0x08", "tcp_ecn 1"}));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].result, kResultSuccess);
  EXPECT_EQ(records[0].description, "pfc: [] -> [3]");
  EXPECT_EQ(records[1].result, kResultSuccess);
  EXPECT_EQ(r.Status("sim0")->counts.at({QosField::kPfc, "success"}), 1u);
  EXPECT_EQ(StepOnce(r, nic, t0 + 5s), RemediationState::kInSync);
  EXPECT_EQ(nic.calls.size(), 2u);
}

TEST(Enforce, ALinkThatWentDownSinceTheInventoryIsBlockedOnTheFreshRead) {
  FakeNic nic;  // the context (inventory) still says the link is up
  nic.state.dcb.value.pfc->enabled_mask = 0;
  nic.state.link.speed_mbps = Observed<uint32_t>::Ok(0);  // the fresh read: no link
  Remediator r(Enforce(), &nic, nic.Facts());
  EXPECT_EQ(StepOnce(r, nic, t0), RemediationState::kBlockedDown);
  EXPECT_TRUE(nic.calls.empty()) << "a down link is never written";
  nic.state.link.speed_mbps = Observed<uint32_t>::Ok(100000);
  EXPECT_EQ(StepOnce(r, nic, t0 + 1s), RemediationState::kActed);
}

TEST(Enforce, Mlx5ReplacedTheOldDscpSoNoDeleteIsSent) {
  FakeNic nic;
  auto& apps = nic.state.dcb.value.apps;
  std::erase_if(apps, [](const DcbApp& a) { return a.protocol == 26; });
  apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, 5, 26});
  Remediator r(Enforce(), &nic, nic.Facts());
  std::vector<ActionRecord> records;
  EXPECT_EQ(StepOnce(r, nic, t0, &records), RemediationState::kActed);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"set sim0 apps=1"}));
  for (const auto& rec : records) EXPECT_EQ(rec.result, kResultSuccess) << rec.description;
  EXPECT_EQ(nic.state.dcb.value.DscpPriorities(26), std::vector<uint8_t>{3});
}

TEST(Enforce, CoreAppTableKeepsBothSoTheOldEntryIsDeletedAfterTheAdd) {
  FakeNic nic;
  nic.mlx5_app_semantics = false;  // dcbnl core path: several priorities per DSCP
  auto& apps = nic.state.dcb.value.apps;
  std::erase_if(apps, [](const DcbApp& a) { return a.protocol == 26; });
  apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, 5, 26});
  Remediator r(Enforce(), &nic, nic.Facts());
  EXPECT_EQ(StepOnce(r, nic, t0), RemediationState::kActed);
  EXPECT_EQ(nic.calls, (std::vector<std::string>{"set sim0 apps=1", "del sim0 1"}));
  EXPECT_EQ(nic.state.dcb.value.DscpPriorities(26), std::vector<uint8_t>{3});
}

TEST(Enforce, KernelRejectionIsFailedAndAWriteThatDoesNotTakeIsMismatch) {
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  nic.fail_next =
      MakeError(EINVAL, "RTM_SETDCB IEEE_SET sim0: kernel rejected the write: Invalid argument");
  Remediator r(Enforce(), &nic, nic.Facts());
  std::vector<ActionRecord> records;
  StepOnce(r, nic, t0, &records);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].result, kResultFailed);
  EXPECT_NE(records[0].error.find("Invalid argument"), std::string::npos);

  nic.ignore_writes = true;
  records.clear();
  StepOnce(r, nic, t0 + 1h, &records);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].result, kResultMismatch);
  EXPECT_NE(records[0].error.find("read back: []"), std::string::npos) << records[0].error;
  EXPECT_EQ(r.Status("sim0")->counts.at({QosField::kPfc, "failed"}), 1u);
  EXPECT_EQ(r.Status("sim0")->counts.at({QosField::kPfc, "mismatch"}), 1u);
}

// ---------------------------------------------------------------------------------------------
// Dry-run

TEST(DryRun, LogsThePlanOnceAndChangesNothing) {
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  RemediationOptions o;
  o.mode = RemediationMode::kDryRun;
  Remediator r(o, &nic, nic.Facts());
  std::vector<ActionRecord> records;
  for (int s = 0; s < 100; ++s) {
    EXPECT_EQ(StepOnce(r, nic, t0 + std::chrono::seconds(s), &records), RemediationState::kDryRun);
  }
  EXPECT_TRUE(nic.calls.empty());
  EXPECT_EQ(nic.state.dcb.value.pfc->enabled_mask, 0);
  ASSERT_EQ(records.size(), 1u);  // the same plan is not repeated
  EXPECT_EQ(records[0].description, "pfc: [] -> [3]");
  EXPECT_EQ(records[0].result, kResultDryRun);
  // A different drift is a different plan: logged again.
  nic.state.tcp_ecn = Observed<int>::Ok(0);
  StepOnce(r, nic, t0 + 200s, &records);
  EXPECT_EQ(records.size(), 3u);
  EXPECT_TRUE(nic.calls.empty());
}

TEST(Mode, OffNeverWrites) {
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  Remediator r(RemediationOptions{}, &nic, nic.Facts());
  StepOnce(r, nic, t0);
  EXPECT_TRUE(nic.calls.empty());
  EXPECT_TRUE(ParseRemediationMode("enforce").ok());
  EXPECT_TRUE(ParseRemediationMode("dry-run").ok());
  EXPECT_FALSE(ParseRemediationMode("on").ok());
}

bool CapEffFromProcStatus(int cap) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("CapEff:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> cap) & 1;
  return false;
}

TEST(Capability, MatchesProcStatusAndSeesADroppedCapability) {
  EXPECT_EQ(HasNetAdminCapability(), CapEffFromProcStatus(CAP_NET_ADMIN));
  if (!HasNetAdminCapability()) GTEST_SKIP() << "no CAP_NET_ADMIN to drop";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3]{};
    if (syscall(SYS_capget, &h, d) != 0) _exit(3);
    d[CAP_NET_ADMIN / 32].effective &= ~(1u << (CAP_NET_ADMIN % 32));
    if (syscall(SYS_capset, &h, d) != 0) _exit(4);
    _exit(HasNetAdminCapability() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace roceqos::remediate_test
