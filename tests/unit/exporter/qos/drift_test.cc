#include "exporter/qos/drift.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

#include "exporter/core/logging.h"
#include "tests/unit/support/captured_log.h"
#include "tests/unit/support/qos_observation.h"

namespace roceqos {
namespace {

using std::chrono::seconds;
using Clock = std::chrono::system_clock;
using ::testing::HasSubstr;

ObservedQos InSyncObservation() { return qos_test::DefaultPolicyObservation("mlx5_2"); }

const QosPolicy kDefault = DefaultPolicy().defaults;

void SetDscp(ObservedQos& o, uint16_t dscp, std::optional<uint8_t> prio) {
  auto& apps = o.dcb.value.apps;
  std::erase_if(apps, [&](const DcbApp& a) { return a.protocol == dscp; });
  if (prio) apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, *prio, dscp});
}

TEST(Drift, DefaultPolicyOnAWellConfiguredNicIsInSync) {
  DeviceDrift d = EvaluateDrift(kDefault, InSyncObservation());
  EXPECT_TRUE(d.InSync());
  // One verdict per checked field of the default policy, none for unchecked ones.
  std::vector<QosField> fields;
  for (const auto& v : d.fields) fields.push_back(v.field);
  EXPECT_EQ(fields,
            (std::vector<QosField>{QosField::kTrust, QosField::kPfc, QosField::kDscpPrio,
                                   QosField::kRoceTos, QosField::kDcqcnNp, QosField::kDcqcnRp,
                                   QosField::kTcpEcn, QosField::kCnpDscp, QosField::kCnpPrio}));
}

// Each field drifts on its own and only its own verdict changes.
struct FieldCase {
  const char* name;
  QosField field;
  std::function<void(ObservedQos&)> mutate;
  std::function<void(QosPolicy&)> policy;  // extra checks switched on for the field
  const char* actual;                      // substring of the verdict's actual
  const char* impact;                      // substring of the impact
};

class DriftPerField : public testing::TestWithParam<FieldCase> {};

TEST_P(DriftPerField, OnlyThatFieldDrifts) {
  QosPolicy policy = kDefault;
  if (GetParam().policy) GetParam().policy(policy);
  ObservedQos o = InSyncObservation();
  ASSERT_TRUE(EvaluateDrift(policy, o).InSync());
  GetParam().mutate(o);
  DeviceDrift d = EvaluateDrift(policy, o);
  EXPECT_FALSE(d.InSync());
  for (const auto& v : d.fields) {
    if (v.field == GetParam().field) {
      EXPECT_EQ(v.status, FieldStatus::kDrift) << QosFieldName(v.field);
      EXPECT_NE(v.actual.find(GetParam().actual), std::string::npos) << v.actual;
      EXPECT_NE(v.impact.find(GetParam().impact), std::string::npos) << v.impact;
    } else {
      EXPECT_EQ(v.status, FieldStatus::kInSync) << QosFieldName(v.field) << ": " << v.actual;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, DriftPerField,
    testing::Values(
        FieldCase{"pfc_off_on_3", QosField::kPfc,
                  [](ObservedQos& o) { o.dcb.value.pfc->enabled_mask = 0; }, nullptr, "[]",
                  "PFC off on priority 3: RoCE traffic there becomes lossy"},
        FieldCase{"pfc_extra_on_4", QosField::kPfc,
                  [](ObservedQos& o) { o.dcb.value.pfc->enabled_mask = 0x18; }, nullptr, "[3, 4]",
                  "PFC on priority 4, which the policy keeps lossy"},
        FieldCase{"trust_pcp", QosField::kTrust,
                  [](ObservedQos& o) {
                    // dcb app del of every DSCP entry: mlx5 falls back to PCP trust. The map
                    // field then drifts too, so only check trust with the map unchecked.
                    o.dcb.value.apps.clear();
                  },
                  [](QosPolicy& p) { p.dscp_prio.reset(); }, "pcp", "VLAN PCP instead of DSCP"},
        FieldCase{"dscp26_deleted", QosField::kDscpPrio,
                  [](ObservedQos& o) { SetDscp(o, 26, std::nullopt); }, nullptr, "26: none",
                  "DSCP 26 -> none (expected 3)"},
        FieldCase{"dscp48_moved", QosField::kDscpPrio, [](ObservedQos& o) { SetDscp(o, 48, 0); },
                  nullptr, "48: 0", "DSCP 48 -> 0 (expected 6)"},
        FieldCase{"dscp26_twice", QosField::kDscpPrio,
                  [](ObservedQos& o) {
                    o.dcb.value.apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, 5, 26});
                  },
                  nullptr, "26: 3+5", "DSCP 26 -> 3+5"},
        FieldCase{"prio_tc", QosField::kPrioTc,
                  [](ObservedQos& o) { o.dcb.value.ets->prio_tc[3] = 0; },
                  [](QosPolicy& p) { p.prio_tc = std::array<uint8_t, 8>{1, 0, 2, 3, 4, 5, 6, 7}; },
                  "[1, 0, 2, 0,", "other traffic classes"},
        FieldCase{"ets", QosField::kEts,
                  [](ObservedQos& o) { o.dcb.value.ets->tc_tsa[6] = IEEE_8021QAZ_TSA_STRICT; },
                  [](QosPolicy& p) {
                    EtsPolicy e;
                    e.tsa.fill(IEEE_8021QAZ_TSA_VENDOR);
                    p.ets = e;
                  },
                  "strict", "transmit scheduler"},
        FieldCase{"buffer", QosField::kBuffer,
                  [](ObservedQos& o) { o.dcb.value.buffer->prio_buffer[3] = 0; },
                  [](QosPolicy& p) {
                    BufferPolicy b;
                    b.prio_buffer = {0, 0, 0, 1, 0, 0, 0, 0};
                    p.buffer = b;
                  },
                  "prio_buffer [0, 0, 0, 0,", "headroom"},
        FieldCase{"tos", QosField::kRoceTos,
                  [](ObservedQos& o) {
                    o.roce_tos[0].tos.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(0);
                  },
                  nullptr, "mlx5_2/1=0", "lossless class (26)"},
        FieldCase{"dcqcn_np", QosField::kDcqcnNp,
                  [](ObservedQos& o) { o.dcqcn.np_enabled[3] = Observed<bool>::Ok(false); },
                  nullptr, "enabled on []", "the notification point off on [3]: no CNPs are sent"},
        FieldCase{"dcqcn_rp", QosField::kDcqcnRp,
                  [](ObservedQos& o) { o.dcqcn.rp_enabled[3] = Observed<bool>::Ok(false); },
                  nullptr, "enabled on []", "the reaction point off on [3]: CNPs are ignored"},
        FieldCase{"tcp_ecn", QosField::kTcpEcn,
                  [](ObservedQos& o) { o.tcp_ecn = Observed<int>::Ok(2); }, nullptr, "2",
                  "TCP does not negotiate ECN"},
        FieldCase{"mtu", QosField::kMtu,
                  [](ObservedQos& o) { o.mtu = Observed<uint32_t>::Ok(1500); },
                  [](QosPolicy& p) { p.mtu = 4200; }, "1500", "path MTU"},
        FieldCase{"link_speed_below_minimum", QosField::kLinkSpeedMin,
                  [](ObservedQos& o) { o.link.speed_mbps = Observed<uint32_t>::Ok(100000); },
                  [](QosPolicy& p) { p.link_speed_min_mbps = 200000; }, "100000 Mb/s",
                  "negotiated less than the fabric's speed"},
        FieldCase{"link_down", QosField::kLinkSpeedMin,
                  [](ObservedQos& o) { o.link.speed_mbps = Observed<uint32_t>::Ok(0); },
                  [](QosPolicy& p) { p.link_speed_min_mbps = 1; }, "no link",
                  "negotiated less than the fabric's speed"},
        FieldCase{"sriov_numvfs", QosField::kSriovNumVfs,
                  [](ObservedQos& o) { o.link.sriov_numvfs = Observed<uint32_t>::Ok(4); },
                  [](QosPolicy& p) { p.sriov_numvfs = 8; }, "4", "VFs"},
        FieldCase{"cnp_dscp", QosField::kCnpDscp,
                  [](ObservedQos& o) { o.dcqcn.cnp_dscp = Observed<uint8_t>::Ok(26); }, nullptr,
                  "26", "CNPs leave with another DSCP"},
        FieldCase{"cnp_802p_prio", QosField::kCnpPrio,
                  [](ObservedQos& o) { o.dcqcn.cnp_802p_prio = Observed<uint8_t>::Ok(3); }, nullptr,
                  "3", "CNPs leave on another priority"}),
    [](const testing::TestParamInfo<FieldCase>& param) { return std::string(param.param.name); });

// An inbox (upstream) mlx5 has no ecn/ sysfs: the CNP fields cannot be verified, which is not
// drift; a MOFED file that exists but cannot be read is unknown.
TEST(Drift, CnpMarkingWithoutMofedSysfsIsUnverifiedNotDrift) {
  ObservedQos o = InSyncObservation();
  o.dcqcn.cnp_dscp = Observed<uint8_t>::Absent();
  o.dcqcn.cnp_802p_prio = Observed<uint8_t>::Failed("read ecn/roce_np/cnp_802p_prio: EIO");
  DeviceDrift d = EvaluateDrift(kDefault, o);
  const FieldVerdict* dscp = d.Find(QosField::kCnpDscp);
  ASSERT_NE(dscp, nullptr);
  EXPECT_EQ(dscp->status, FieldStatus::kAbsent);
  EXPECT_NE(dscp->actual.find("MOFED"), std::string::npos) << dscp->actual;
  EXPECT_EQ(d.Find(QosField::kCnpPrio)->status, FieldStatus::kFailed);
  EXPECT_FALSE(d.InSync()) << "an unreadable field is not known to be in sync";
  o.dcqcn.cnp_802p_prio = Observed<uint8_t>::Absent();
  EXPECT_TRUE(EvaluateDrift(kDefault, o).InSync());
  EXPECT_EQ(EvaluateDrift(kDefault, o).Unverifiable(), 2u);
}

// The DCQCN rate parameters: one dcqcn_params verdict, with a detail per listed parameter.
ObservedQos WithDcqcnParams(ObservedQos o) {
  DcqcnParams params;
  params.reaction_point = {{"rpg_ai_rate", 5}, {"rpg_hai_rate", 50}, {"rpg_time_reset", 300}};
  params.notification_point = {{"min_time_between_cnps", 4}, {"cnp_dscp", 48}};
  o.dcqcn_params = Observed<DcqcnParams>::Ok(params);
  return o;
}

QosPolicy WithParamPolicy() {
  QosPolicy p = kDefault;
  p.dcqcn_rp_params = {{"rpg_ai_rate", 5}, {"rpg_time_reset", 300}};
  p.dcqcn_np_params = {{"min_time_between_cnps", 4}};
  return p;
}

TEST(Drift, DcqcnParamsDriftPerParameter) {
  const QosPolicy policy = WithParamPolicy();
  ObservedQos o = WithDcqcnParams(InSyncObservation());
  DeviceDrift d = EvaluateDrift(policy, o);
  ASSERT_TRUE(d.InSync());
  ASSERT_EQ(d.dcqcn_params.size(), 3u);
  o.dcqcn_params.value.reaction_point["rpg_ai_rate"] = 1;  // a firmware reset to another default
  d = EvaluateDrift(policy, o);
  const FieldVerdict* v = d.Find(QosField::kDcqcnParams);
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->Drifted());
  EXPECT_NE(v->impact.find("roce_rp/rpg_ai_rate 1 (expected 5)"), std::string::npos) << v->impact;
  EXPECT_NE(v->actual.find("roce_rp/rpg_ai_rate=1"), std::string::npos) << v->actual;
  int drifted = 0;
  for (const auto& p : d.dcqcn_params) {
    drifted += p.status == FieldStatus::kDrift;
    if (p.status == FieldStatus::kDrift) {
      EXPECT_EQ(p.name, "rpg_ai_rate");
    }
  }
  EXPECT_EQ(drifted, 1);
  // Parameters the policy does not list never matter (rpg_hai_rate).
  o = WithDcqcnParams(InSyncObservation());
  o.dcqcn_params.value.reaction_point["rpg_hai_rate"] = 1;
  EXPECT_TRUE(EvaluateDrift(policy, o).InSync());
}

TEST(Drift, DcqcnParamsWithoutMofedAreUnverifiedNotDrift) {
  // Upstream mlx5: the parameters exist only in debugfs cc_params, which is not read.
  const QosPolicy policy = WithParamPolicy();
  ObservedQos o = InSyncObservation();
  o.dcqcn_params = Observed<DcqcnParams>::Absent();
  DeviceDrift d = EvaluateDrift(policy, o);
  EXPECT_EQ(d.Find(QosField::kDcqcnParams)->status, FieldStatus::kAbsent);
  EXPECT_NE(d.Find(QosField::kDcqcnParams)->actual.find("MOFED"), std::string::npos);
  EXPECT_TRUE(d.InSync());
  EXPECT_TRUE(d.dcqcn_params.empty());
}

TEST(Drift, DcqcnParamFileThisDriverLacksIsAbsentForThatParameterOnly) {
  QosPolicy policy = WithParamPolicy();
  policy.dcqcn_rp_params["dce_tcp_rtt"] = 1;
  ObservedQos o = WithDcqcnParams(InSyncObservation());
  DeviceDrift d = EvaluateDrift(policy, o);
  EXPECT_EQ(d.Find(QosField::kDcqcnParams)->status, FieldStatus::kInSync);
  EXPECT_NE(d.Find(QosField::kDcqcnParams)->actual.find("absent: roce_rp/dce_tcp_rtt"),
            std::string::npos);
  // Only missing files: nothing could be verified.
  QosPolicy only_missing = kDefault;
  only_missing.dcqcn_rp_params = {{"dce_tcp_rtt", 1}};
  EXPECT_EQ(EvaluateDrift(only_missing, o).Find(QosField::kDcqcnParams)->status,
            FieldStatus::kAbsent);
  // An unreadable file with nothing drifted is unknown, not in sync.
  o.dcqcn_params.value.errors.push_back("read ecn/roce_rp/rpg_gd: EIO");
  EXPECT_EQ(EvaluateDrift(policy, o).Find(QosField::kDcqcnParams)->status, FieldStatus::kFailed);
}

TEST(Drift, UncheckedFieldsProduceNoVerdictEvenWhenWildlyOff) {
  QosPolicy policy;  // everything unchecked
  ObservedQos o = InSyncObservation();
  o.dcb.value.pfc->enabled_mask = 0xff;
  o.tcp_ecn = Observed<int>::Ok(0);
  DeviceDrift d = EvaluateDrift(policy, o);
  EXPECT_TRUE(d.fields.empty());
  EXPECT_TRUE(d.InSync());
}

TEST(Drift, NoDcbOnTheDeviceCannotBeVerifiedAndIsNotDrift) {
  ObservedQos o = InSyncObservation();
  o.dcb = Observed<QosState>::Absent();
  DeviceDrift d = EvaluateDrift(kDefault, o);
  for (QosField f : {QosField::kTrust, QosField::kPfc, QosField::kDscpPrio}) {
    const FieldVerdict* v = d.Find(f);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->status, FieldStatus::kAbsent);
    EXPECT_FALSE(v->Drifted());
    EXPECT_FALSE(v->Known());
    EXPECT_NE(v->actual.find("EOPNOTSUPP"), std::string::npos) << v->actual;
  }
  EXPECT_EQ(d.Find(QosField::kTcpEcn)->status, FieldStatus::kInSync);
  EXPECT_TRUE(d.InSync()) << "what cannot be verified neither breaks nor proves being in sync";
  EXPECT_EQ(d.Unverifiable(), 3u);
  // A value that exists and differs is drift, whatever else cannot be verified.
  o.tcp_ecn = Observed<int>::Ok(2);
  EXPECT_FALSE(EvaluateDrift(kDefault, o).InSync());
  EXPECT_TRUE(EvaluateDrift(kDefault, o).Find(QosField::kTcpEcn)->Drifted());
}

TEST(Drift, DriverWithoutBufferSupportReportsBufferAbsent) {
  QosPolicy policy = kDefault;
  policy.buffer = BufferPolicy{};
  ObservedQos o = InSyncObservation();
  o.dcb.value.buffer.reset();
  EXPECT_EQ(EvaluateDrift(policy, o).Find(QosField::kBuffer)->status, FieldStatus::kAbsent);
}

TEST(Drift, FailedReadIsUnknownNotDriftButNotInSyncEither) {
  ObservedQos o = InSyncObservation();
  o.dcqcn.np_enabled[6] = Observed<bool>::Failed("read .../roce_np/enable/6: Input/output error");
  o.tcp_ecn = Observed<int>::Failed("open /proc/sys/net/ipv4/tcp_ecn: Permission denied");
  DeviceDrift d = EvaluateDrift(kDefault, o);
  const FieldVerdict* np = d.Find(QosField::kDcqcnNp);
  EXPECT_EQ(np->status, FieldStatus::kFailed);
  EXPECT_FALSE(np->Drifted());
  EXPECT_NE(np->actual.find("Input/output error"), std::string::npos);
  EXPECT_EQ(d.Find(QosField::kTcpEcn)->status, FieldStatus::kFailed);
  EXPECT_FALSE(d.InSync());
}

TEST(Drift, DcqcnOnMorePrioritiesThanListedIsInSync) {
  ObservedQos o = InSyncObservation();
  for (int p = 0; p < 8; ++p) {
    o.dcqcn.np_enabled[p] = Observed<bool>::Ok(true);  // the MOFED default
    o.dcqcn.rp_enabled[p] = Observed<bool>::Ok(true);
  }
  DeviceDrift d = EvaluateDrift(kDefault, o);
  EXPECT_EQ(d.Find(QosField::kDcqcnNp)->status, FieldStatus::kInSync);
  EXPECT_EQ(d.Find(QosField::kDcqcnNp)->actual, "enabled on [0, 1, 2, 3, 4, 5, 6, 7]");
  o.dcqcn.np_enabled[3] = Observed<bool>::Ok(false);
  d = EvaluateDrift(kDefault, o);
  EXPECT_EQ(d.Find(QosField::kDcqcnNp)->status, FieldStatus::kDrift);
  EXPECT_NE(d.Find(QosField::kDcqcnNp)->impact.find("off on [3]"), std::string::npos);
}

TEST(Drift, NonMofedHostHasDcqcnAbsent) {
  ObservedQos o = InSyncObservation();
  o.dcqcn = DcqcnState{};
  DeviceDrift d = EvaluateDrift(kDefault, o);
  EXPECT_EQ(d.Find(QosField::kDcqcnNp)->status, FieldStatus::kAbsent);
  EXPECT_NE(d.Find(QosField::kDcqcnNp)->actual.find("MOFED"), std::string::npos);
}

TEST(Drift, TosChecksEveryPortAndNeedsOne) {
  ObservedQos o = InSyncObservation();
  PortTos second = o.roce_tos[0];
  second.port = 2;
  second.tos.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(96);
  o.roce_tos.push_back(second);
  DeviceDrift d = EvaluateDrift(kDefault, o);
  const FieldVerdict* v = d.Find(QosField::kRoceTos);
  EXPECT_EQ(v->status, FieldStatus::kDrift);
  EXPECT_EQ(v->actual, "mlx5_2/1=106, mlx5_2/2=96");

  o.roce_tos.clear();
  EXPECT_EQ(EvaluateDrift(kDefault, o).Find(QosField::kRoceTos)->status, FieldStatus::kAbsent);
}

// No global MOFED traffic_class and no rdma_cm default: "not set", and the reason says what that
// does (DSCP 0 for QPs without their own ToS) instead of blaming the QPs.
TEST(Drift, AnUnsetTrafficClassIsNamedAndExplained) {
  ObservedQos o = InSyncObservation();
  o.roce_tos[0].tos.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(std::nullopt);
  const DeviceDrift drift = EvaluateDrift(kDefault, o);
  const FieldVerdict* v = drift.Find(QosField::kRoceTos);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->status, FieldStatus::kDrift);
  EXPECT_EQ(v->actual, "mlx5_2/1=not set");
  EXPECT_THAT(v->impact, HasSubstr("no global traffic_class is set: QPs that set no ToS of their "
                                   "own go out with DSCP 0, so no PFC and no DCQCN"));
  EXPECT_THAT(v->impact, HasSubstr("roce_tos: null"));
  // An rdma_cm default that matches is the effective ToS: in sync.
  o.roce_tos[0].tos.configfs_tos = Observed<uint8_t>::Ok(106);
  EXPECT_EQ(EvaluateDrift(kDefault, o).Find(QosField::kRoceTos)->status, FieldStatus::kInSync);
}

TEST(Drift, EtsBandwidthOfNonEtsTcsIsIgnored) {
  QosPolicy policy = kDefault;
  EtsPolicy e;
  e.tsa = {IEEE_8021QAZ_TSA_ETS, IEEE_8021QAZ_TSA_ETS, 0, 0, 0, 0, 0, 0};
  e.bandwidth = {50, 50, 0, 0, 0, 0, 0, 0};
  policy.ets = e;
  ObservedQos o = InSyncObservation();
  o.dcb.value.ets->tc_tsa = e.tsa;
  o.dcb.value.ets->tc_tx_bw = {50, 50, 100, 0, 0, 0, 0, 0};  // driver noise on strict TC 2
  EXPECT_EQ(EvaluateDrift(policy, o).Find(QosField::kEts)->status, FieldStatus::kInSync);
  o.dcb.value.ets->tc_tx_bw[1] = 40;
  EXPECT_EQ(EvaluateDrift(policy, o).Find(QosField::kEts)->status, FieldStatus::kDrift);
}

TEST(StateFingerprint, ChangesWithConfigurationNotWithItsAbsence) {
  ObservedQos a = InSyncObservation();
  ObservedQos b = InSyncObservation();
  EXPECT_EQ(StateFingerprint(a), StateFingerprint(b));
  b.dcb.value.pfc->enabled_mask = 0;
  EXPECT_NE(StateFingerprint(a), StateFingerprint(b));
  b = a;
  SetDscp(b, 26, 5);
  EXPECT_NE(StateFingerprint(a), StateFingerprint(b));
  b = a;
  b.tcp_ecn = Observed<int>::Ok(2);
  EXPECT_NE(StateFingerprint(a), StateFingerprint(b));
}

TEST(DriftTracker, CountsEntriesIntoDriftAndStateChanges) {
  DriftTracker tracker;
  ObservedQos o = InSyncObservation();
  Clock::time_point t0 = Clock::time_point(seconds(1000));

  auto h = &tracker.Record("sim0", EvaluateDrift(kDefault, o), StateFingerprint(o), t0);
  EXPECT_EQ(h->drift_events.at(QosField::kPfc), 0u);
  EXPECT_EQ(h->last_change, t0);  // the first poll is the first known state

  // Unchanged for a while: no events, no change time.
  h = &tracker.Record("sim0", EvaluateDrift(kDefault, o), StateFingerprint(o), t0 + seconds(5));
  EXPECT_EQ(h->last_change, t0);

  // PFC off: one event, change time moves; staying off adds nothing.
  o.dcb.value.pfc->enabled_mask = 0;
  h = &tracker.Record("sim0", EvaluateDrift(kDefault, o), StateFingerprint(o), t0 + seconds(10));
  EXPECT_EQ(h->drift_events.at(QosField::kPfc), 1u);
  EXPECT_EQ(h->last_change, t0 + seconds(10));
  h = &tracker.Record("sim0", EvaluateDrift(kDefault, o), StateFingerprint(o), t0 + seconds(15));
  EXPECT_EQ(h->drift_events.at(QosField::kPfc), 1u);

  // Back in sync, then off again: a second event.
  o.dcb.value.pfc->enabled_mask = 0x08;
  tracker.Record("sim0", EvaluateDrift(kDefault, o), StateFingerprint(o), t0 + seconds(20));
  o.dcb.value.pfc->enabled_mask = 0;
  h = &tracker.Record("sim0", EvaluateDrift(kDefault, o), StateFingerprint(o), t0 + seconds(25));
  EXPECT_EQ(h->drift_events.at(QosField::kPfc), 2u);
  EXPECT_EQ(h->drift_events.at(QosField::kTrust), 0u);

  // A failed read in between does not count as leaving drift.
  ObservedQos failed = o;
  failed.dcb = Observed<QosState>::Failed("RTM_GETDCB: timeout");
  tracker.Record("sim0", EvaluateDrift(kDefault, failed), StateFingerprint(failed),
                 t0 + seconds(30));
  h = &tracker.Record("sim0", EvaluateDrift(kDefault, o), StateFingerprint(o), t0 + seconds(35));
  EXPECT_EQ(h->drift_events.at(QosField::kPfc), 2u);
}

TEST(DriftTracker, StartingInDriftCountsOneEventAndVanishedDevicesAreDropped) {
  DriftTracker tracker;
  ObservedQos o = InSyncObservation();
  o.tcp_ecn = Observed<int>::Ok(0);
  auto h = &tracker.Record("sim0", EvaluateDrift(kDefault, o), StateFingerprint(o),
                           Clock::time_point(seconds(1)));
  EXPECT_EQ(h->drift_events.at(QosField::kTcpEcn), 1u);
  tracker.Record("sim1", EvaluateDrift(kDefault, o), StateFingerprint(o),
                 Clock::time_point(seconds(1)));
  tracker.Retain({"sim1"});
  EXPECT_EQ(tracker.Find("sim0"), nullptr);
  EXPECT_NE(tracker.Find("sim1"), nullptr);
}

TEST(DriftTracker, LogsWhenAFieldStartsAndStopsDriftingRateLimitedButConverging) {
  CapturedLog log;
  DriftTracker tracker;
  ObservedQos o = InSyncObservation();
  const Clock::time_point t0 = Clock::time_point(seconds(1000));
  auto record = [&](Clock::time_point at) {
    tracker.Record("sim0", EvaluateDrift(kDefault, o), StateFingerprint(o), at);
  };

  record(t0);
  EXPECT_EQ(log.Take(), "") << "in sync from the start: nothing to say";

  o.dcb.value.pfc->enabled_mask = 0;
  record(t0 + seconds(1));
  const std::string started = log.Take();
  EXPECT_THAT(started, HasSubstr(" level=warn msg=\"qos field drift started\" netdev=sim0 "
                                 "field=pfc expected="));
  EXPECT_THAT(started, HasSubstr(" unlogged_transitions=0\n"));
  EXPECT_EQ(std::count(started.begin(), started.end(), '\n'), 1);

  // Flapping inside the interval logs nothing more...
  o.dcb.value.pfc->enabled_mask = 0x08;
  record(t0 + seconds(2));
  o.dcb.value.pfc->enabled_mask = 0;
  record(t0 + seconds(3));
  o.dcb.value.pfc->enabled_mask = 0x08;
  record(t0 + seconds(4));
  EXPECT_EQ(log.Take(), "");
  // ...and once the interval has passed the log catches up with the truth, counting the flaps.
  record(t0 + seconds(12));
  const std::string ended = log.Take();
  EXPECT_THAT(ended, HasSubstr(" level=info msg=\"qos field drift ended\" netdev=sim0 field=pfc "));
  EXPECT_THAT(ended, HasSubstr(" unlogged_transitions=2\n"));
  record(t0 + seconds(30));
  EXPECT_EQ(log.Take(), "") << "steady state: silent";
}

}  // namespace
}  // namespace roceqos
