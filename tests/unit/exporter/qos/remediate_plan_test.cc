#include "exporter/qos/remediate_plan.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>

#include <array>
#include <vector>

#include "tests/unit/exporter/qos/remediate_fixture.h"

// Remediation plans (remediate_plan.cc): the writes that bring a device back to its policy.

namespace roceqos::remediate_test {
namespace {

using namespace std::chrono_literals;

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

}  // namespace
}  // namespace roceqos::remediate_test
