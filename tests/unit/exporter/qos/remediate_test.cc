#include "exporter/qos/remediate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <linux/dcbnl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tests/unit/support/qos_observation.h"

namespace roceqos {
namespace {

using namespace std::chrono_literals;
using TimePoint = Remediator::Clock::time_point;

const QosPolicy kPolicy = DefaultPolicy().defaults;

// The default policy, satisfied.
ObservedQos Good() { return qos_test::DefaultPolicyObservation(); }

DeviceContext UpPf() {
  DeviceContext c;
  c.netdev = "sim0";
  c.identity = "sim0";
  c.role = DeviceRole::kPf;
  c.oper_up = true;
  c.rdma_devices = {"mlx5_0"};
  c.storm = StormGuard::kClear;
  return c;
}

// A device that behaves like mlx5 behind the writer interface: one priority per DSCP (setapp
// replaces), delapp of a mapping that is not there fails with ENOENT, last DSCP entry removed ->
// PCP trust (no entries). `ignore_writes` simulates a write that does not take.
class FakeNic : public QosWriter, public StormWitness, public DeviceResolver, public LockWitness {
 public:
  // The write gate's facts: by default the planned device, fresh and storm-free, lock held.
  StormGuard storm = StormGuard::kClear;
  // The time of the newest read; by default one never older than the gate's now.
  std::function<TimePoint()> clock = [] { return TimePoint::max(); };
  std::optional<std::string> netdev_now = "sim0";
  std::vector<std::string> rdma_now = {"mlx5_0"};
  bool lock_held = true;
  StormFacts Witness(const std::string&, std::chrono::nanoseconds) override {
    return {storm, clock()};
  }
  // Tests name devices "sim<N>" by identity too; "pci:..." identities are the device sim0 was.
  std::optional<ResolvedDevice> Resolve(const std::string& identity) override {
    if (!identity.starts_with("pci:")) return ResolvedDevice{identity, 7, rdma_now};
    if (!netdev_now) return std::nullopt;
    return ResolvedDevice{*netdev_now, 7, rdma_now};
  }
  bool StillHeld() override { return lock_held; }
  WriteFacts Facts() { return {this, this, this}; }

  ObservedQos state = Good();
  bool ignore_writes = false;
  bool mlx5_app_semantics = true;
  std::optional<Error> fail_next;
  // dcbnl_ieee_set's order: ETS is applied, then the PFC part fails and the rest is not tried.
  bool pfc_part_fails = false;
  std::vector<std::string> calls;
  int reads = 0;
  std::function<void()> on_write;            // runs before each write (a kill point, a slow device)
  std::function<void(QosState&)> after_pfc;  // what the driver does after a PFC change
  std::vector<BufferState> buffers_sent;

  Result<void> SetDcb(const std::string& netdev, const DcbWrite& w) override {
    calls.push_back("set " + netdev + Parts(w));
    if (on_write) on_write();
    if (auto e = Fail()) return *e;
    if (ignore_writes) return {};
    QosState& s = state.dcb.value;
    if (w.ets) s.ets = w.ets;
    if (w.pfc && pfc_part_fails) return MakeError(EINVAL, "kernel rejected the write");
    if (w.pfc) s.pfc = w.pfc;
    if (w.pfc && after_pfc) after_pfc(s);
    if (w.buffer) buffers_sent.push_back(*w.buffer);
    if (w.buffer) s.buffer = w.buffer;
    for (const auto& app : w.apps) {
      if (mlx5_app_semantics)
        std::erase_if(s.apps, [&](const DcbApp& a) { return a.protocol == app.protocol; });
      if (std::find(s.apps.begin(), s.apps.end(), app) == s.apps.end()) s.apps.push_back(app);
    }
    std::sort(s.apps.begin(), s.apps.end());
    return {};
  }
  Result<void> DeleteDcbApps(const std::string& netdev, const std::vector<DcbApp>& apps) override {
    calls.push_back("del " + netdev + " " + std::to_string(apps.size()));
    if (auto e = Fail()) return *e;
    if (ignore_writes) return {};
    for (const auto& app : apps) {
      auto it = std::find(state.dcb.value.apps.begin(), state.dcb.value.apps.end(), app);
      if (it == state.dcb.value.apps.end()) return MakeError(ENOENT, "no such app");
      state.dcb.value.apps.erase(it);
    }
    return {};
  }
  Result<void> WriteDcqcn(const std::string& netdev, bool np, int prio, bool enable) override {
    calls.push_back(fmt::format("dcqcn {} {} {} {}", netdev, np ? "np" : "rp", prio, enable));
    if (auto e = Fail()) return *e;
    if (!ignore_writes)
      (np ? state.dcqcn.np_enabled : state.dcqcn.rp_enabled)[prio] = Observed<bool>::Ok(enable);
    return {};
  }
  Result<void> WriteTcpEcn(int value) override {
    calls.push_back(fmt::format("tcp_ecn {}", value));
    if (on_write) on_write();
    if (auto e = Fail()) return *e;
    if (!ignore_writes) state.tcp_ecn = Observed<int>::Ok(value);
    return {};
  }
  Result<void> WriteRoceTos(const std::string& dev, uint32_t port, int tos) override {
    calls.push_back(fmt::format("tos {}/{} {}", dev, port, tos));
    if (auto e = Fail()) return *e;
    if (!ignore_writes)
      state.roce_tos[0].tos.mofed_tclass =
          Observed<std::optional<uint8_t>>::Ok(static_cast<uint8_t>(tos));
    return {};
  }

  Result<void> WriteDcqcnParam(const std::string& netdev, bool np, const std::string& param,
                               uint64_t value) override {
    calls.push_back(fmt::format("param {} {} {} {}", netdev, np ? "np" : "rp", param, value));
    if (auto e = Fail()) return *e;
    if (ignore_writes) return {};
    const auto u8 = static_cast<uint8_t>(value);
    if (np && param == "cnp_dscp") state.dcqcn.cnp_dscp = Observed<uint8_t>::Ok(u8);
    if (np && param == "cnp_802p_prio") state.dcqcn.cnp_802p_prio = Observed<uint8_t>::Ok(u8);
    if (state.dcqcn_params.ok())
      (np ? state.dcqcn_params.value.notification_point
          : state.dcqcn_params.value.reaction_point)[param] = value;
    return {};
  }

  Remediator::Reread Reader() {
    return [this] {
      ++reads;
      return state;
    };
  }

 private:
  static std::string Parts(const DcbWrite& w) {
    std::string s;
    if (w.ets) s += " ets";
    if (w.pfc) s += fmt::format(" pfc={:#04x}", w.pfc->enabled_mask);
    if (w.buffer) s += " buffer";
    if (!w.apps.empty()) s += fmt::format(" apps={}", w.apps.size());
    return s;
  }
  std::optional<Error> Fail() {
    auto e = fail_next;
    fail_next.reset();
    return e;
  }
};

RemediationOptions Enforce() {
  RemediationOptions o;
  o.mode = RemediationMode::kEnforce;
  return o;
}

RemediationState StepOnce(Remediator& r, FakeNic& nic, TimePoint now,
                          std::vector<ActionRecord>* records = nullptr,
                          DeviceContext context = UpPf()) {
  ObservedQos observed = nic.state;
  return r.Step(context, kPolicy, observed, EvaluateDrift(kPolicy, observed), now, nic.Reader(),
                records);
}

const TimePoint t0 = TimePoint(1000s);

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
// Plans

TEST(Plan, PfcKeepsCableLengthAndWarnsAboutTheLinkFlap) {
  ObservedQos o = Good();
  o.dcb.value.pfc = PfcState{8, 0x10, 0, 30};
  auto plan = PlanRemediation(kPolicy, o, EvaluateDrift(kPolicy, o));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].field, QosField::kPfc);
  ASSERT_TRUE(plan[0].dcb.pfc);
  EXPECT_EQ(plan[0].dcb.pfc->enabled_mask, 0x08);
  EXPECT_EQ(plan[0].dcb.pfc->delay, 30);
  EXPECT_NE(plan[0].side_effect.find("link flaps"), std::string::npos);
  EXPECT_EQ(DescribeAction(plan[0]), "pfc: [4] -> [3]");
}

TEST(Plan, DscpReplacementAddsBeforeItDeletes) {
  ObservedQos o = Good();
  std::erase_if(o.dcb.value.apps, [](const DcbApp& a) { return a.protocol == 26; });
  o.dcb.value.apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, 5, 26});
  auto plan = PlanRemediation(kPolicy, o, EvaluateDrift(kPolicy, o));
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].kind, RemediationAction::Kind::kDcbSet);
  EXPECT_EQ(plan[0].dcb.apps, (std::vector<DcbApp>{{IEEE_8021QAZ_APP_SEL_DSCP, 3, 26}}));
  EXPECT_EQ(plan[1].kind, RemediationAction::Kind::kDcbDeleteApps);
  EXPECT_EQ(plan[1].dcb.apps, (std::vector<DcbApp>{{IEEE_8021QAZ_APP_SEL_DSCP, 5, 26}}));
}

TEST(Plan, TrustDscpInstallsTheFullMapWithPolicyEntries) {
  QosPolicy policy = kPolicy;
  policy.dscp_prio = std::map<uint8_t, uint8_t>{{26, 3}, {48, 6}, {40, 4}};
  ObservedQos o = Good();
  o.dcb.value.apps.clear();  // trust pcp
  auto plan = PlanRemediation(policy, o, EvaluateDrift(policy, o));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].field, QosField::kTrust);
  ASSERT_EQ(plan[0].dcb.apps.size(), 64u);
  EXPECT_EQ(plan[0].dcb.apps[40].priority, 4);  // the policy's entry instead of 40/8 = 5
  EXPECT_EQ(plan[0].dcb.apps[41].priority, 5);  // the default d/8
  EXPECT_EQ(plan[0].dcb.apps[7].priority, 0);
  EXPECT_NE(plan[0].side_effect.find("restart its channels"), std::string::npos);
}

TEST(Plan, TrustPcpDeletesEveryDscpEntry) {
  QosPolicy policy = kPolicy;
  policy.trust = TrustMode::kPcp;
  policy.dscp_prio.reset();
  ObservedQos o = Good();
  auto plan = PlanRemediation(policy, o, EvaluateDrift(policy, o));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].kind, RemediationAction::Kind::kDcbDeleteApps);
  EXPECT_EQ(plan[0].dcb.apps.size(), 64u);
}

TEST(Plan, EtsWriteZeroesBandwidthOfNonEtsTcs) {
  QosPolicy policy = kPolicy;
  policy.prio_tc = std::array<uint8_t, 8>{0, 1, 2, 3, 4, 5, 6, 7};
  ObservedQos o = Good();  // vendor TCs with 100 % each, prio0 <-> prio1 swapped
  auto plan = PlanRemediation(policy, o, EvaluateDrift(policy, o));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].field, QosField::kPrioTc);
  EXPECT_EQ(plan[0].dcb.ets->prio_tc, *policy.prio_tc);
  EXPECT_EQ(plan[0].dcb.ets->tc_tx_bw, (std::array<uint8_t, 8>{}));
}

TEST(Plan, DcqcnTosAndTcpEcnArePerItemWrites) {
  ObservedQos o = Good();
  o.dcqcn.np_enabled[3] = Observed<bool>::Ok(false);
  o.dcqcn.rp_enabled[3] = Observed<bool>::Ok(false);
  o.dcqcn.rp_enabled[5] = Observed<bool>::Ok(true);  // not listed: never switched off
  o.roce_tos[0].tos.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(std::nullopt);
  o.tcp_ecn = Observed<int>::Ok(2);
  auto plan = PlanRemediation(kPolicy, o, EvaluateDrift(kPolicy, o));
  std::vector<std::string> got;
  for (const auto& a : plan) got.push_back(DescribeAction(a));
  EXPECT_EQ(got,
            (std::vector<std::string>{"dcqcn_np: ecn/roce_np/enable/3=0 -> 1",
                                      "dcqcn_rp: ecn/roce_rp/enable/3=0 -> 1",
                                      "roce_tos: mlx5_0/1 tclass 0 -> 106", "tcp_ecn: 2 -> 1"}));
}

TEST(Plan, CnpMarkingIsOneSysfsWritePerDriftedFile) {
  ObservedQos o = Good();
  o.dcqcn.cnp_dscp = Observed<uint8_t>::Ok(26);
  o.dcqcn.cnp_802p_prio = Observed<uint8_t>::Ok(3);
  auto plan = PlanRemediation(kPolicy, o, EvaluateDrift(kPolicy, o));
  std::vector<std::string> got;
  for (const auto& a : plan) got.push_back(DescribeAction(a));
  EXPECT_EQ(got, (std::vector<std::string>{"cnp_dscp: ecn/roce_np/cnp_dscp=26 -> 48",
                                           "cnp_802p_prio: ecn/roce_np/cnp_802p_prio=3 -> 6"}));
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].kind, RemediationAction::Kind::kDcqcnParam);
  EXPECT_TRUE(plan[0].np);
  EXPECT_EQ(plan[0].param, "cnp_dscp");
  EXPECT_EQ(plan[0].param_value, 48u);
}

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

TEST(Plan, AbsentFailedAndMtuFieldsAreNotRemediated) {
  QosPolicy policy = kPolicy;
  policy.mtu = 9000;
  ObservedQos o = Good();
  o.dcqcn = DcqcnState{};                                     // absent (no MOFED)
  o.tcp_ecn = Observed<int>::Failed("EACCES");                // unknown
  o.roce_tos[0].tos = RoceTosState{};                         // absent
  o.roce_tos[0].tos.configfs_tos = Observed<uint8_t>::Ok(0);  // configfs only: not written
  DeviceDrift drift = EvaluateDrift(policy, o);
  EXPECT_FALSE(drift.InSync());
  EXPECT_TRUE(PlanRemediation(policy, o, drift).empty());
  FakeNic nic;
  nic.state = o;
  Remediator r(Enforce(), &nic, nic.Facts());
  EXPECT_EQ(r.Step(UpPf(), policy, o, drift, t0, nic.Reader()), RemediationState::kObserveOnly);
  EXPECT_TRUE(nic.calls.empty());
}

// ---------------------------------------------------------------------------------------------
// Enforce, verify, count

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
// Writes: one read per plan, DCB parts in one message, stop at the first failure, exact report.

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

// ---------------------------------------------------------------------------------------------
// State file: attempts, back-off, give-up and applies in progress survive a restart.

std::string StatePath(const std::string& name) {
  return ::testing::TempDir() + "/remediation_state_" + std::to_string(getpid()) + "_" + name +
         ".json";
}

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
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  Remediator r(Enforce(), &nic, nic.Facts(), &store);
  EXPECT_EQ(r.suspended_reason(), "state_unreadable");
  EXPECT_EQ(StepOnce(r, nic, t0), RemediationState::kBlockedStateUnavailable);
  EXPECT_TRUE(nic.calls.empty());
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), text);
  std::filesystem::remove(path);
}

// ---------------------------------------------------------------------------------------------
// Fail closed: every way around max-attempts that a review found, each with its guard.

// A device that gave up (max_attempts 1, writes never hold).
struct GivenUp {
  FakeNic nic;
  Remediator r;
  explicit GivenUp(RemediationStore* store = nullptr) : r(Options(), &nic, nic.Facts(), store) {
    nic.ignore_writes = true;
    nic.state.dcb.value.pfc->enabled_mask = 0;
    StepOnce(r, nic, t0);
    EXPECT_EQ(StepOnce(r, nic, t0 + 1h), RemediationState::kGaveUp);
    nic.calls.clear();
  }
  static RemediationOptions Options() {
    RemediationOptions o = Enforce();
    o.max_attempts = 1;
    return o;
  }
};

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
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  Remediator r(Enforce(), &nic, nic.Facts(), &store);
  EXPECT_EQ(r.suspended_reason(), "state_unwritable");
  EXPECT_EQ(StepOnce(r, nic, t0), RemediationState::kBlockedStateUnavailable);
  EXPECT_TRUE(nic.calls.empty());
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

// ---------------------------------------------------------------------------------------------

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
}  // namespace roceqos

namespace roceqos {
namespace {

// ---------------------------------------------------------------------------------------------
// The write gate (issue 37): each finding of the review as a named case. Every pass below was
// posted with a clean context; only the facts at the moment of the write differ.

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
}  // namespace roceqos
