#pragma once

// What the remediation tests share (remediate_test.cc, remediate_plan_test.cc,
// remediate_apply_test.cc, remediate_store_test.cc, ledger_test.cc, write_gate_test.cc): the
// default policy and its satisfied observation, an up PF, and FakeNic, a device that behaves like
// mlx5 behind the writer interface and supplies the write gate's facts.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/qos/drift.h"
#include "exporter/qos/remediate.h"
#include "tests/unit/support/qos_observation.h"

namespace roceqos::remediate_test {

using TimePoint = Remediator::Clock::time_point;

inline const QosPolicy kPolicy = DefaultPolicy().defaults;

// The default policy, satisfied.
inline ObservedQos Good() { return qos_test::DefaultPolicyObservation(); }

inline DeviceContext UpPf() {
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

inline RemediationOptions Enforce() {
  RemediationOptions o;
  o.mode = RemediationMode::kEnforce;
  return o;
}

inline RemediationState StepOnce(Remediator& r, FakeNic& nic, TimePoint now,
                                 std::vector<ActionRecord>* records = nullptr,
                                 DeviceContext context = UpPf()) {
  ObservedQos observed = nic.state;
  return r.Step(context, kPolicy, observed, EvaluateDrift(kPolicy, observed), now, nic.Reader(),
                records);
}

inline const TimePoint t0 = TimePoint(std::chrono::seconds(1000));

// A state file of its own per test and process.
inline std::string StatePath(const std::string& name) {
  return ::testing::TempDir() + "/remediation_state_" + std::to_string(getpid()) + "_" + name +
         ".json";
}

// Enforce over a store it cannot use from the start: suspended for `reason`, and a drifted device
// is blocked without a single write.
inline void ExpectEnforceSuspendedWithoutWrites(RemediationStore& store, std::string_view reason) {
  FakeNic nic;
  nic.state.dcb.value.pfc->enabled_mask = 0;
  Remediator r(Enforce(), &nic, nic.Facts(), &store);
  EXPECT_EQ(r.suspended_reason(), reason);
  EXPECT_EQ(StepOnce(r, nic, t0), RemediationState::kBlockedStateUnavailable);
  EXPECT_TRUE(nic.calls.empty());
}

// A device that gave up (max_attempts 1, writes never hold).
struct GivenUp {
  FakeNic nic;
  Remediator r;
  explicit GivenUp(RemediationStore* store = nullptr) : r(Options(), &nic, nic.Facts(), store) {
    nic.ignore_writes = true;
    nic.state.dcb.value.pfc->enabled_mask = 0;
    StepOnce(r, nic, t0);
    EXPECT_EQ(StepOnce(r, nic, t0 + std::chrono::hours(1)), RemediationState::kGaveUp);
    nic.calls.clear();
  }
  static RemediationOptions Options() {
    RemediationOptions o = Enforce();
    o.max_attempts = 1;
    return o;
  }
};

}  // namespace roceqos::remediate_test
