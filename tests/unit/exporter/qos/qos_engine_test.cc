#include "exporter/qos/qos_engine.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "exporter/qos/policy_loader.h"
#include "tests/unit/support/forwarding_qos_port.h"
#include "tests/unit/support/netns.h"
#include "tests/unit/support/write_facts_fake.h"

namespace roceqos {
namespace {

// Every write these tests make finds its device where planned, no storm, the lock held.
testing::FakeWriteFacts& PermissiveFacts() {
  static testing::FakeWriteFacts facts;
  return facts;
}

using namespace std::chrono_literals;

// Holds the thread that passes through it until the test releases it (or 30 s pass, so a failed
// test cannot hang the join). Synchronisation only: the test waits on it, never sleeps.
class Gate {
 public:
  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void Pass() {
    std::unique_lock lock(mu_);
    if (!held_) return;
    entered_ = true;
    cv_.notify_all();
    if (!cv_.wait_for(lock, 30s, [&] { return !held_; })) timed_out_ = true;
  }
  bool WaitEntered() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return entered_; });
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    cv_.notify_all();
  }
  bool timed_out() {
    std::lock_guard lock(mu_);
    return timed_out_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false, entered_ = false, timed_out_ = false;
};

// Releases the gate on every way out of a test, before the engine joins its worker.
struct ReleaseOnExit {
  Gate& gate;
  ~ReleaseOnExit() { gate.Release(); }
};

// The remediation clock of the engine and its worker; advanced by the test.
struct FakeClock {
  const std::chrono::steady_clock::time_point base = std::chrono::steady_clock::now();
  std::atomic<int64_t> offset_ns{0};
  std::chrono::steady_clock::time_point Now() const {
    return base + std::chrono::nanoseconds(offset_ns.load());
  }
  void Advance(std::chrono::nanoseconds d) { offset_ns += d.count(); }
};

// A fake host whose device state the test edits; counts reads per source. The sampler reads it
// and the remediation worker reads and writes it: every method holds `mu`. The test edits the
// fields directly only while the worker is idle (or holds `mu`).
class FakeHost : public QosReader, public QosWriter {
 public:
  std::mutex mu;
  std::map<std::string, QosState> dcb;
  Observed<int> tcp_ecn = Observed<int>::Ok(1);
  std::map<std::string, int> dcb_reads, dcqcn_reads;
  int tcp_ecn_reads = 0;
  std::vector<std::string> writes;
  bool ignore_writes = false;  // a write the kernel accepts but something undoes at once
  Gate* gate = nullptr;        // SetDcb waits on it first

  void AddNic(const std::string& netdev) {
    QosState s;
    s.pfc = PfcState{8, 0x08, 0, 7};
    for (uint16_t d = 0; d < 64; ++d)
      s.apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(d / 8), d});
    dcb[netdev] = s;
  }

  Observed<QosState> ReadDcb(const std::string& netdev) override {
    std::lock_guard lock(mu);
    ++dcb_reads[netdev];
    auto it = dcb.find(netdev);
    return it == dcb.end() ? Observed<QosState>::Absent() : Observed<QosState>::Ok(it->second);
  }
  DcqcnState ReadDcqcn(const std::string& netdev) override {
    std::lock_guard lock(mu);
    ++dcqcn_reads[netdev];
    DcqcnState s;
    for (int p = 0; p < 8; ++p) {
      s.np_enabled[p] = Observed<bool>::Ok(p == 3);
      s.rp_enabled[p] = Observed<bool>::Ok(p == 3);
    }
    return s;
  }
  RoceTosState ReadRoceTos(const std::string&, uint32_t) override {
    std::lock_guard lock(mu);
    RoceTosState s;
    s.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(tclass);
    return s;
  }
  std::optional<uint8_t> tclass = 106;  // MOFED global traffic_class; nullopt: not set

  // A ConnectX port as the driver leaves it: PFC off, no APP entry (trust pcp).
  void FactoryDefaults(const std::string& netdev) {
    std::lock_guard lock(mu);
    dcb[netdev].pfc->enabled_mask = 0;
    dcb[netdev].apps.clear();
  }
  Observed<int> ReadTcpEcn() override {
    std::lock_guard lock(mu);
    ++tcp_ecn_reads;
    return tcp_ecn;
  }
  Observed<uint16_t> ReadStormTimeout(const std::string&) override {
    return Observed<uint16_t>::Absent();
  }

  Result<void> SetDcb(const std::string& netdev, const DcbWrite& w) override {
    if (gate != nullptr) gate->Pass();  // outside `mu`: the sampler keeps reading meanwhile
    std::lock_guard lock(mu);
    writes.push_back("set " + netdev);
    if (w.pfc && !ignore_writes) dcb[netdev].pfc = w.pfc;
    return {};
  }
  Result<void> DeleteDcbApps(const std::string&, const std::vector<DcbApp>&) override { return {}; }
  Result<void> WriteDcqcn(const std::string&, bool, int, bool) override { return {}; }
  Result<void> WriteTcpEcn(int v) override {
    std::lock_guard lock(mu);
    writes.push_back("tcp_ecn");
    tcp_ecn = Observed<int>::Ok(v);
    return {};
  }
  Result<void> WriteRoceTos(const std::string&, uint32_t, int) override { return {}; }
  Result<void> WriteDcqcnParam(const std::string&, bool, const std::string&, uint64_t) override {
    return {};
  }
};

// The remediation worker's own reader and writer: both reach the same fake host.
using HostPort = ForwardingQosPort<FakeHost>;

// The engine owns its readers and writer; the test keeps a pointer to inspect the fake.
struct Harness {
  FakeHost* host;
  std::unique_ptr<QosEngine> engine;
  std::vector<std::shared_ptr<const QosDeviceState>> last;
  std::vector<std::shared_ptr<const Device>> devices;

  explicit Harness(QosEngineOptions options = {}, std::string_view policy_yaml = "") {
    auto owned = std::make_unique<FakeHost>();
    host = owned.get();
    std::shared_ptr<const PolicySet> policy =
        policy_yaml.empty()
            ? std::make_shared<const PolicySet>(DefaultPolicy())
            : std::make_shared<const PolicySet>(*ParsePolicy(policy_yaml, "t.yaml"));
    engine = std::make_unique<QosEngine>(
        options, policy, std::move(owned),
        QosIo{std::make_unique<HostPort>(host), std::make_unique<HostPort>(host)});
  }

  void AddDevice(const std::string& name) {
    host->AddNic(name);
    auto d = std::make_shared<Device>();
    d->name = name;
    d->role = DeviceRole::kPf;
    d->pci_vendor = 0x15b3;
    d->oper_state = OperState::kUp;
    d->mtu = 1500;
    RdmaPort port;
    port.device = "mlx5_" + std::to_string(devices.size());
    PermissiveFacts().rdma_of["netdev:" + name] = {port.device};  // where the gate finds it
    port.port = 1;
    d->rdma_ports.push_back(port);
    devices.push_back(d);
    last.push_back(nullptr);
  }

  QosEngine::Output Step(bool storm = false) {
    std::vector<QosEngine::DeviceInput> in;
    for (size_t i = 0; i < devices.size(); ++i)
      in.push_back({devices[i], last[i], storm ? StormGuard::kStorm : StormGuard::kClear});
    auto out = engine->Update(in);
    last = out.devices;
    return out;
  }

  bool Idle() { return engine->WaitForRemediationIdle(std::chrono::steady_clock::now() + 10s); }

  // A pass, the worker's step of it, and the pass that shows the outcome; returns that pass with
  // the worker idle again (whatever it posted has run too).
  QosEngine::Output Settled(bool storm = false) {
    Step(storm);
    EXPECT_TRUE(Idle());
    auto out = Step(storm);
    EXPECT_TRUE(Idle());
    return out;
  }

  std::vector<std::string> Writes() {
    std::lock_guard lock(host->mu);
    return host->writes;
  }
};

ChangeEvent DcbEvent(const std::string& netdev,
                     std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now()) {
  ChangeEvent e;
  e.kind = ChangeEvent::Kind::kDcb;
  e.netdev = netdev;
  e.received = t;
  return e;
}

QosEngineOptions LongPoll() {
  QosEngineOptions o;
  o.poll_interval = 1h;  // only notifications trigger reads in these tests
  return o;
}

TEST(QosEngine, FirstPassReadsEverySourceOnceThenReusesTheState) {
  Harness h(LongPoll());
  h.AddDevice("sim0");
  h.AddDevice("sim1");
  auto out = h.Step();
  ASSERT_EQ(out.devices.size(), 2u);
  EXPECT_TRUE(out.devices[0]->drift.InSync());
  EXPECT_EQ(h.host->dcb_reads["sim0"], 1);
  EXPECT_EQ(h.host->dcqcn_reads["sim1"], 1);
  EXPECT_EQ(h.host->tcp_ecn_reads, 1);  // host-wide, once per pass
  auto first = out.devices;

  out = h.Step();
  EXPECT_EQ(out.devices[0], first[0]) << "unchanged devices keep the same immutable state";
  EXPECT_EQ(h.host->dcb_reads["sim0"], 1);
  EXPECT_EQ(h.host->tcp_ecn_reads, 1);
}

TEST(QosEngine, NotificationReReadsOnlyThatDevicesDcbAndMeasuresLatency) {
  Harness h(LongPoll());
  h.AddDevice("sim0");
  h.AddDevice("sim1");
  h.Step();
  auto before = h.last;

  h.host->dcb["sim0"].pfc->enabled_mask = 0;  // `dcb pfc set dev sim0 prio-pfc 3:off`
  const auto received = std::chrono::steady_clock::now();
  h.engine->OnChange(DcbEvent("sim0", received));
  auto out = h.Step();
  const auto after = std::chrono::steady_clock::now();

  EXPECT_EQ(h.host->dcb_reads["sim0"], 2);
  EXPECT_EQ(h.host->dcqcn_reads["sim0"], 1) << "a DCB notification re-reads DCB only";
  EXPECT_EQ(h.host->dcb_reads["sim1"], 1);
  EXPECT_EQ(out.devices[1], before[1]);
  const FieldVerdict* pfc = out.devices[0]->drift.Find(QosField::kPfc);
  ASSERT_NE(pfc, nullptr);
  EXPECT_EQ(pfc->status, FieldStatus::kDrift);
  EXPECT_EQ(out.devices[0]->drift_events.at(QosField::kPfc), 1u);

  ASSERT_TRUE(out.global->last_detection_latency_seconds);
  double latency = *out.global->last_detection_latency_seconds;
  EXPECT_GT(latency, 0);
  EXPECT_LE(latency, std::chrono::duration<double>(after - received).count());
  EXPECT_EQ(out.global->max_detection_latency_seconds, latency);
  EXPECT_EQ(out.global->change_notifications, 1u);
}

TEST(QosEngine, OnlyDcbChangesAndNewOrRemovedNetdevsWakeTheSampler) {
  Harness h(LongPoll());
  h.AddDevice("sim0");
  h.Step();
  ChangeEvent e = DcbEvent("sim0");
  e.kind = ChangeEvent::Kind::kLink;
  QosEngine::ChangeResponse r = h.engine->OnChange(e);
  EXPECT_FALSE(r.sample) << "a flap of a known device changes no DCB state";
  EXPECT_FALSE(r.discovery);
  e.netdev = "sim7";
  r = h.engine->OnChange(e);
  EXPECT_TRUE(r.sample && r.discovery) << "a new netdev needs a discovery";
  e.kind = ChangeEvent::Kind::kLinkRemoved;
  e.netdev = "sim0";
  r = h.engine->OnChange(e);
  EXPECT_TRUE(r.sample && r.discovery);
  EXPECT_TRUE(r.dcb_changed.empty()) << "a link event names no DCB change";
  r = h.engine->OnChange(DcbEvent("sim0"));
  EXPECT_TRUE(r.sample);
  EXPECT_FALSE(r.discovery);
  EXPECT_EQ(r.dcb_changed, std::vector<std::string>{"sim0"}) << "its ethtool names may change";
  h.Step();
  EXPECT_EQ(h.host->dcb_reads["sim0"], 2) << "only the DCB event re-read the device";
  e.kind = ChangeEvent::Kind::kLink;
  h.engine->OnChange(e);
  h.Step();
  EXPECT_EQ(h.host->dcb_reads["sim0"], 2) << "a link event of a known device reads nothing";
}

TEST(QosEngine, PollCatchesChangesWithoutNotification) {
  QosEngineOptions o;
  o.poll_interval = 0s;  // every pass polls
  Harness h(o);
  h.AddDevice("sim0");
  h.Step();
  h.host->tcp_ecn = Observed<int>::Ok(0);  // sysctl changed: no netlink notification exists
  auto out = h.Step();
  EXPECT_EQ(out.devices[0]->drift.Find(QosField::kTcpEcn)->status, FieldStatus::kDrift);
  EXPECT_FALSE(out.global->last_detection_latency_seconds) << "no notification was involved";
}

// The MOFED ecn/ tree is ~37 firmware commands per netdev on mlx5: a poll reads it only once
// --qos.dcqcn-poll-interval has passed, and keeps (and judges) the last values in between.
TEST(QosEngine, PollReadsTheEcnTreeOnlyEveryDcqcnPollInterval) {
  QosEngineOptions o;
  o.poll_interval = 0s;  // every pass polls
  o.dcqcn_poll_interval = 1h;
  Harness h(o);
  h.AddDevice("sim0");
  h.Step();
  auto out = h.Step();
  EXPECT_EQ(h.host->dcb_reads["sim0"], 2);
  EXPECT_EQ(h.host->tcp_ecn_reads, 2);
  EXPECT_EQ(h.host->dcqcn_reads["sim0"], 1) << "the ecn/ tree is not due yet";
  EXPECT_EQ(out.devices[0]->observed.dcqcn.np_enabled[3], Observed<bool>::Ok(true)) << "kept";
  EXPECT_EQ(out.devices[0]->drift.Find(QosField::kDcqcnNp)->status, FieldStatus::kInSync);
  EXPECT_LT(out.devices[0]->dcqcn_polled_at, out.devices[0]->polled_at);

  ChangeEvent resync;
  resync.kind = ChangeEvent::Kind::kResync;
  resync.resync_reason = ChangeEvent::ResyncReason::kReadError;
  h.engine->OnChange(resync);
  h.Step();
  EXPECT_EQ(h.host->dcqcn_reads["sim0"], 2) << "a resync reads everything";

  o.dcqcn_poll_interval = 0s;
  Harness every(o);
  every.AddDevice("sim0");
  every.Step();
  every.Step();
  EXPECT_EQ(every.host->dcqcn_reads["sim0"], 2) << "due at every poll";
}

TEST(QosEngine, ResyncAfterOverflowReReadsEverything) {
  Harness h(LongPoll());
  h.AddDevice("sim0");
  h.Step();
  ChangeEvent resync;
  resync.kind = ChangeEvent::Kind::kResync;
  resync.resync_reason = ChangeEvent::ResyncReason::kReadError;  // e.g. EMSGSIZE, not ENOBUFS
  EXPECT_TRUE(h.engine->OnChange(resync).discovery);
  auto out = h.Step();
  EXPECT_EQ(h.host->dcqcn_reads["sim0"], 2);
  // Counted under its reason only (roce_qos_monitor_resyncs_total{reason="read_error"}).
  EXPECT_EQ(out.global->monitor_resyncs, (std::array<uint64_t, 3>{0, 1, 0}));
}

TEST(QosEngine, RejectedReloadKeepsTheLastGoodPolicyAndSaysSo) {
  std::string path =
      ::testing::TempDir() + "/qos_engine_reload_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "defaults: {pfc: [3]}\n";
  QosEngineOptions o = LongPoll();
  o.config_path = path;
  auto initial = LoadPolicy(path);
  ASSERT_TRUE(initial.ok());
  Harness h(o);
  h.AddDevice("sim0");
  h.Step();

  std::ofstream(path) << "defaults: {pfc: [3, 9]}\n";  // invalid
  auto r = h.engine->ReloadPolicy();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(":1:"), std::string::npos) << r.error().message;
  auto out = h.Step();
  EXPECT_FALSE(out.global->policy_reload_success);
  EXPECT_NE(out.global->policy_reload_error.find("out of range"), std::string::npos);
  EXPECT_EQ(h.engine->policy()->defaults.pfc, 0x08);
  EXPECT_TRUE(out.devices[0]->drift.InSync());

  std::ofstream(path) << "defaults: {pfc: [4]}\n";  // valid, different
  ASSERT_TRUE(h.engine->ReloadPolicy().ok());
  out = h.Step();
  EXPECT_TRUE(out.global->policy_reload_success);
  EXPECT_EQ(out.global->policy_source, path);
  EXPECT_EQ(out.devices[0]->drift.Find(QosField::kPfc)->status, FieldStatus::kDrift)
      << "a new policy re-evaluates every device at once";
  EXPECT_EQ(h.host->dcb_reads["sim0"], 1) << "without re-reading it";
  std::filesystem::remove(path);
}

// Guard: a reload is not a reset. 100 reloads of the same file leave a given-up device given up
// (no extra write); a reload that changes only another device's rule leaves it alone too.
TEST(QosEngine, NoReloadResetsADevicesRemediationState) {
  std::string path =
      ::testing::TempDir() + "/qos_engine_same_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "defaults: {pfc: [3]}\n";
  QosEngineOptions o = LongPoll();
  o.config_path = path;
  o.remediation.mode = RemediationMode::kEnforce;
  o.write_facts = PermissiveFacts().Facts();
  o.remediation.max_attempts = 1;
  o.remediation.base_backoff = 0s;  // straight to the give-up decision
  Harness h(o);
  h.AddDevice("sim0");
  h.host->ignore_writes = true;  // something undoes every write
  h.host->dcb["sim0"].pfc->enabled_mask = 0;
  EXPECT_EQ(h.Settled().devices[0]->remediation, RemediationState::kActed);
  h.engine->OnChange(DcbEvent("sim0"));
  EXPECT_EQ(h.Settled().devices[0]->remediation, RemediationState::kGaveUp);
  const size_t writes = h.host->writes.size();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(h.engine->ReloadPolicy().ok());
    EXPECT_EQ(h.Settled().devices[0]->remediation, RemediationState::kGaveUp) << "reload " << i;
  }
  std::ofstream(path) << "defaults: {pfc: [3]}\ndevices:\n  - match: {netdev: \"other.*\"}\n"
                         "    policy: {pfc: [4]}\n";
  ASSERT_TRUE(h.engine->ReloadPolicy().ok());
  EXPECT_EQ(h.Settled().devices[0]->remediation, RemediationState::kGaveUp);
  EXPECT_EQ(h.host->writes.size(), writes) << "no write from any of those reloads";

  // Even a reload that changes this device's target (and one back) grants no fresh attempts: the
  // ledger counts per PCI function, whatever the policy (issue 37, finding 5).
  std::ofstream(path) << "defaults: {pfc: [4]}\n";
  ASSERT_TRUE(h.engine->ReloadPolicy().ok());
  EXPECT_EQ(h.Settled().devices[0]->remediation, RemediationState::kGaveUp);
  std::ofstream(path) << "defaults: {pfc: [3]}\n";
  ASSERT_TRUE(h.engine->ReloadPolicy().ok());
  EXPECT_EQ(h.Settled().devices[0]->remediation, RemediationState::kGaveUp);
  EXPECT_EQ(h.host->writes.size(), writes);
  std::filesystem::remove(path);
}

TEST(QosEngine, EnforcePublishesTheStateAfterTheWrites) {
  QosEngineOptions o = LongPoll();
  o.remediation.mode = RemediationMode::kEnforce;
  o.write_facts = PermissiveFacts().Facts();
  Harness h(o);
  h.AddDevice("sim0");
  h.host->dcb["sim0"].pfc->enabled_mask = 0;
  auto out = h.Settled();
  EXPECT_EQ(h.host->writes, (std::vector<std::string>{"set sim0"}));
  EXPECT_EQ(out.devices[0]->remediation, RemediationState::kActed);
  EXPECT_TRUE(out.devices[0]->drift.InSync());
  EXPECT_EQ(out.devices[0]->remediation_counts.at({QosField::kPfc, "success"}), 1u);
  EXPECT_EQ(out.devices[0]->drift_events.at(QosField::kPfc), 1u)
      << "fixed before it was published, but it did drift";
}

TEST(QosEngine, StormFromTheSnapshotBlocksRemediation) {
  QosEngineOptions o = LongPoll();
  o.remediation.mode = RemediationMode::kEnforce;
  o.write_facts = PermissiveFacts().Facts();
  Harness h(o);
  h.AddDevice("sim0");
  h.host->dcb["sim0"].pfc->enabled_mask = 0;
  auto out = h.Settled(/*storm=*/true);
  EXPECT_TRUE(h.host->writes.empty());
  EXPECT_EQ(out.devices[0]->remediation, RemediationState::kBlockedStorm);
}

TEST(QosEngine, DriverReadySentinelIsWaitedForWhereItsDirectoryExists) {
  std::string dir = ::testing::TempDir() + "/qos_engine_drivers_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  QosEngineOptions o = LongPoll();
  o.remediation.mode = RemediationMode::kEnforce;
  o.write_facts = PermissiveFacts().Facts();
  o.poll_interval = 0s;
  o.driver_ready_path = dir + "/.driver-ready";
  Harness h(o);
  h.AddDevice("sim0");
  h.host->dcb["sim0"].pfc->enabled_mask = 0;
  EXPECT_EQ(h.Settled().devices[0]->remediation, RemediationState::kBlockedDriverNotReady);
  EXPECT_TRUE(h.host->writes.empty());
  std::ofstream(dir + "/.driver-ready") << "";
  EXPECT_EQ(h.Settled().devices[0]->remediation, RemediationState::kActed);
  std::filesystem::remove_all(dir);
}

TEST(QosEngine, OffModeHasNoRemediationState) {
  Harness h(LongPoll());
  h.AddDevice("sim0");
  h.host->dcb["sim0"].pfc->enabled_mask = 0;
  auto out = h.Step();
  EXPECT_FALSE(out.devices[0]->remediation);
  EXPECT_TRUE(h.host->writes.empty());
}

TEST(QosEngine, FailedReadIsReportedAsAnErrorReason) {
  Harness h(LongPoll());
  h.AddDevice("sim0");
  h.host->tcp_ecn = Observed<int>::Failed("open /proc/sys/net/ipv4/tcp_ecn: EACCES", EACCES);
  auto out = h.Step();
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].errnum, EACCES);
  EXPECT_NE(out.errors[0].message.find("tcp_ecn"), std::string::npos);
}

// --- RoCE ports (docs/policy.md "RoCE ports") ----------------------------------------------

// mlx5's vport RoCE counters of one port (ethtool), as the sampler's draft holds them.
CounterSet VportRdma(uint64_t packets) {
  return {
      std::make_shared<const std::vector<std::string>>(std::vector<std::string>{
          "rx_prio0_packets", "rx_vport_rdma_unicast_packets", "tx_vport_rdma_unicast_packets"}),
      {4000, packets, packets}};
}

QosEngine::Output StepWithCounters(Harness& h, const std::vector<CounterSet>& ethtool) {
  std::vector<QosEngine::DeviceInput> in;
  for (size_t i = 0; i < h.devices.size(); ++i) {
    in.push_back({h.devices[i], h.last[i], StormGuard::kClear});
    in.back().ethtool = &ethtool[i];
  }
  auto out = h.engine->Update(in);
  h.last = out.devices;
  return out;
}

bool Drifted(const QosDeviceState& state, QosField field) {
  const FieldVerdict* v = state.drift.Find(field);
  return v != nullptr && v->Drifted();
}

// An unused port at factory defaults pages nobody; once RoCE traffic moves on it (between two
// polls: no read is due) it is a RoCE port and its drift counts. A fresh engine is a reboot.
TEST(QosEngineRocePorts, FactoryDefaultPortIsUnconfiguredUntilRoceTrafficStarts) {
  Harness h(LongPoll());
  h.AddDevice("sim0");
  h.AddDevice("sim1");
  h.host->tclass = std::nullopt;
  h.host->FactoryDefaults("sim1");
  auto out = StepWithCounters(h, {VportRdma(100), VportRdma(0)});
  ASSERT_TRUE(out.devices[0]->roce_port && out.devices[1]->roce_port);
  EXPECT_TRUE(out.devices[0]->roce_port->checked);
  EXPECT_EQ(out.devices[0]->roce_port->reason, RocePortReason::kConfigured);
  const QosDeviceState& idle = *out.devices[1];
  EXPECT_FALSE(idle.roce_port->checked);
  EXPECT_EQ(idle.roce_port->reason, RocePortReason::kNoRoceTraffic);
  EXPECT_TRUE(Drifted(idle, QosField::kPfc)) << "the verdicts stay, for check and the detail";
  EXPECT_TRUE(idle.drift_events.empty()) << "but they are not drift: nothing counted";

  out = StepWithCounters(h, {VportRdma(100), VportRdma(0)});
  EXPECT_EQ(out.devices[1], h.last[1]);
  EXPECT_EQ(h.host->dcb_reads["sim1"], 1);

  out = StepWithCounters(h, {VportRdma(100), VportRdma(3)});
  const QosDeviceState& busy = *out.devices[1];
  ASSERT_TRUE(busy.roce_port);
  EXPECT_TRUE(busy.roce_port->checked);
  EXPECT_EQ(busy.roce_port->reason, RocePortReason::kTraffic);
  EXPECT_EQ(busy.drift_events.at(QosField::kPfc), 1u);
  EXPECT_EQ(busy.drift_events.at(QosField::kTrust), 1u);
  EXPECT_EQ(h.host->dcb_reads["sim1"], 1) << "the counters decided it: no read";

  out = StepWithCounters(h, {VportRdma(100), VportRdma(3)});
  EXPECT_EQ(out.devices[1], h.last[1]) << "unchanged: the same state";
}

// A driver reload (or a reboot of the NIC) takes an in-sync port back to factory defaults, with
// its counters at 0: the port is remembered by its PCI function, so the drift counts at once.
std::shared_ptr<const Device> OnPci(const std::shared_ptr<const Device>& device,
                                    const std::string& pci) {
  auto copy = std::make_shared<Device>(*device);
  copy->pci_address = pci;
  return copy;
}

TEST(QosEngineRocePorts, InSyncPortResetToFactoryDefaultsStaysARocePort) {
  Harness h(LongPoll());
  h.AddDevice("sim1");
  h.devices[0] = OnPci(h.devices[0], "0000:3b:00.1");
  auto out = StepWithCounters(h, {VportRdma(0)});
  EXPECT_TRUE(out.devices[0]->drift.InSync());

  h.host->FactoryDefaults("sim1");
  h.host->tclass = std::nullopt;
  h.devices[0] = OnPci(h.devices[0], "0000:3b:00.1");  // vanished and came back: a new Device
  h.last[0] = nullptr;                                 // and no previous state
  out = StepWithCounters(h, {VportRdma(0)});
  const QosDeviceState& back = *out.devices[0];
  ASSERT_TRUE(back.roce_port);
  EXPECT_TRUE(back.roce_port->checked);
  EXPECT_EQ(back.roce_port->reason, RocePortReason::kRemembered);
  EXPECT_NE(back.roce_port->detail.find("earlier in this process"), std::string::npos)
      << back.roce_port->detail;
  EXPECT_TRUE(Drifted(back, QosField::kPfc));
  EXPECT_EQ(back.drift_events.at(QosField::kPfc), 1u);

  // Another PCI function at factory defaults is not that port.
  Harness other(LongPoll());
  other.AddDevice("sim1");
  other.devices[0] = OnPci(other.devices[0], "0000:3b:00.0");
  other.host->FactoryDefaults("sim1");
  other.host->tclass = std::nullopt;
  EXPECT_FALSE(StepWithCounters(other, {VportRdma(0)}).devices[0]->roce_port->checked);
}

// A partly configured port (PFC on, DSCP map missing) is configured: its drift pages.
TEST(QosEngineRocePorts, PartlyConfiguredPortIsChecked) {
  Harness h(LongPoll());
  h.AddDevice("sim1");
  h.host->tclass = std::nullopt;
  h.host->FactoryDefaults("sim1");
  h.host->dcb["sim1"].pfc->enabled_mask = 0x08;
  auto out = StepWithCounters(h, {VportRdma(0)});
  EXPECT_TRUE(out.devices[0]->roce_port->checked);
  EXPECT_EQ(out.devices[0]->roce_port->reason, RocePortReason::kConfigured);
  EXPECT_TRUE(Drifted(*out.devices[0], QosField::kDscpPrio));
  EXPECT_EQ(out.devices[0]->drift_events.at(QosField::kDscpPrio), 1u);
}

// Enforce writes nothing of the defaults to a port that is not a RoCE port; it writes once RoCE
// moves there. roce_ports: all writes at once.
TEST(QosEngineRocePorts, EnforceLeavesAnUnconfiguredPortAlone) {
  QosEngineOptions o = LongPoll();
  o.remediation.mode = RemediationMode::kEnforce;
  o.write_facts = PermissiveFacts().Facts();
  Harness h(o);
  h.AddDevice("sim1");
  h.host->tclass = std::nullopt;
  h.host->FactoryDefaults("sim1");
  StepWithCounters(h, {VportRdma(0)});
  ASSERT_TRUE(h.Idle());
  auto out = StepWithCounters(h, {VportRdma(0)});
  ASSERT_TRUE(h.Idle());
  EXPECT_TRUE(h.Writes().empty());
  EXPECT_FALSE(out.devices[0]->roce_port->checked);

  StepWithCounters(h, {VportRdma(1)});
  ASSERT_TRUE(h.Idle());
  StepWithCounters(h, {VportRdma(1)});
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Writes(), (std::vector<std::string>{"set sim1"}));

  Harness all(o, "version: 1\nroce_ports: all\n");
  all.AddDevice("sim1");
  all.host->tclass = std::nullopt;
  all.host->FactoryDefaults("sim1");
  StepWithCounters(all, {VportRdma(0)});
  ASSERT_TRUE(all.Idle());
  EXPECT_EQ(all.Writes(), (std::vector<std::string>{"set sim1"}));
}

// The apply runs on the worker thread: while its write hangs, every Update returns, and once the
// pass has run past its deadline the drifted devices say why nothing happens to them.
TEST(QosEngineWorker, UpdateNeverWaitsForAHungWriteAndReportsItStuckPastTheDeadline) {
  Gate gate;
  FakeClock clock;
  QosEngineOptions o = LongPoll();
  o.remediation.mode = RemediationMode::kEnforce;
  o.write_facts = PermissiveFacts().Facts();
  o.apply_deadline = 7s;
  o.remediation_clock = [&clock] { return clock.Now(); };
  Harness h(o);
  ReleaseOnExit release{gate};
  h.AddDevice("sim0");
  h.AddDevice("sim1");
  h.host->dcb["sim0"].pfc->enabled_mask = 0;
  h.host->gate = &gate;
  gate.Hold();
  h.Step();
  ASSERT_TRUE(gate.WaitEntered()) << "the worker took the pass and is in the write";

  for (int i = 0; i < 5; ++i) {
    auto out = h.Step();  // returns: nothing of the sampler waits on the worker
    EXPECT_FALSE(out.devices[0]->remediation) << "no outcome yet, and not stuck yet";
    EXPECT_FALSE(out.global->apply_stuck);
  }
  clock.Advance(7s);
  auto out = h.Step();
  EXPECT_EQ(out.devices[0]->remediation, RemediationState::kBlockedApplyStuck);
  EXPECT_NE(out.devices[1]->remediation, RemediationState::kBlockedApplyStuck) << "in sync";
  EXPECT_TRUE(out.global->apply_stuck);
  EXPECT_EQ(out.global->apply_stuck_total, 1u);

  {
    std::lock_guard lock(h.host->mu);
    h.host->dcb["sim1"].pfc->enabled_mask = 0;
  }
  h.engine->OnChange(DcbEvent("sim1"));
  out = h.Step();
  EXPECT_EQ(out.devices[1]->remediation, RemediationState::kBlockedApplyStuck)
      << "drifted while the apply hangs: no pass is posted for it";
  EXPECT_EQ(out.global->apply_stuck_total, 1u) << "one episode";

  gate.Release();
  ASSERT_TRUE(h.Idle());
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(h.Writes(), (std::vector<std::string>{"set sim0"})) << "sim1 waited";
  out = h.Step();
  EXPECT_FALSE(out.global->apply_stuck);
  EXPECT_EQ(out.devices[0]->remediation, RemediationState::kActed);
  EXPECT_TRUE(out.devices[0]->drift.InSync()) << "the worker's read after its write";
  ASSERT_TRUE(h.Idle());
  EXPECT_EQ(h.Writes(), (std::vector<std::string>{"set sim0", "set sim1"}))
      << "the device that drifted meanwhile goes out once the worker is back";
  out = h.Step();
  EXPECT_EQ(out.devices[1]->remediation, RemediationState::kActed);
  EXPECT_TRUE(out.devices[1]->drift.InSync());
}

TEST(QosEngineWorker, DryRunOutcomesArriveThroughTheWorker) {
  QosEngineOptions o = LongPoll();
  o.remediation.mode = RemediationMode::kDryRun;
  Harness h(o);
  h.AddDevice("sim0");
  h.host->dcb["sim0"].pfc->enabled_mask = 0;
  auto out = h.Settled();
  EXPECT_EQ(out.devices[0]->remediation, RemediationState::kDryRun);
  EXPECT_EQ(out.devices[0]->remediation_counts.at({QosField::kPfc, "dry_run"}), 1u);
  EXPECT_FALSE(out.devices[0]->drift.InSync()) << "nothing was written";
  EXPECT_TRUE(h.Writes().empty());
}

TEST(QosEngineWorker, OffStartsNoWorker) {
  Harness h(LongPoll());
  h.AddDevice("sim0");
  h.host->dcb["sim0"].pfc->enabled_mask = 0;
  h.Step();
  EXPECT_TRUE(h.engine->WaitForRemediationIdle(std::chrono::steady_clock::now()));
  EXPECT_FALSE(h.Step().devices[0]->remediation);
}

// SIGHUP and POST /-/reload on two threads: the reload that started first reads the older file;
// if it finishes last, it must not replace the newer policy.
TEST(QosEngine, OverlappingReloadsKeepTheNewestRead) {
  std::mutex mu;
  std::condition_variable cv;
  int loads = 0;
  bool first_loading = false, release_first = false;
  QosEngineOptions o = LongPoll();
  o.policy_loader = [&]() -> Result<std::shared_ptr<const PolicySet>> {
    std::unique_lock lock(mu);
    const int n = ++loads;
    auto set = std::make_shared<PolicySet>(
        *ParsePolicy(n == 1 ? "defaults: {pfc: [3]}\n" : "defaults: {pfc: [4]}\n", "policy.yaml"));
    if (n == 1) {
      first_loading = true;
      cv.notify_all();
      cv.wait_for(lock, 10s, [&] { return release_first; });
    }
    return std::shared_ptr<const PolicySet>(std::move(set));
  };
  Harness h(o);
  std::thread older([&] { EXPECT_TRUE(h.engine->ReloadPolicy().ok()); });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return first_loading; }));
  }
  ASSERT_TRUE(h.engine->ReloadPolicy().ok());  // the newer read, installed first
  EXPECT_EQ(h.engine->policy()->defaults.pfc, 0x10);
  {
    std::lock_guard lock(mu);
    release_first = true;
  }
  cv.notify_all();
  older.join();
  EXPECT_EQ(h.engine->policy()->defaults.pfc, 0x10) << "the older read finished last";
  h.AddDevice("sim0");
  EXPECT_TRUE(h.Step().global->policy_reload_success);
}

// The real monitor thread: a link change in a private namespace reaches the engine and wakes the
// sampler.
TEST(QosMonitorThreadKernel, LinkChangeReachesTheEngineAndWakesTheSampler) {
  std::string why;
  auto ns = testing::PrivateNetns::Create("qosmon", &why);
  if (!ns) GTEST_SKIP() << why;
  Harness h(LongPoll());
  std::mutex mu;
  std::condition_variable cv;
  bool woke = false, discovery = false;
  QosMonitorThread thread(h.engine.get(), [&](const QosEngine::ChangeResponse& r) {
    std::lock_guard lock(mu);
    woke = true;
    discovery |= r.discovery;
    cv.notify_all();
  });
  bool started = false;
  ASSERT_TRUE(ns->Run([&] { started = thread.Start(); }, &why)) << why;
  ASSERT_TRUE(started);
  ASSERT_TRUE(ns->Ip("link add qeng0 type veth peer name qeng1"));
  std::unique_lock lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, 10s, [&] { return woke && discovery; }));
  lock.unlock();
  thread.Stop();
}

}  // namespace
}  // namespace roceqos
