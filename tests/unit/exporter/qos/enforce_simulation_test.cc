// A seeded, deterministic simulation of enforce (issue 37): the real RemediationWorker, Remediator,
// write gate and ledger (its file kept in memory, serialized as on disk) run against a fake
// clock, fake devices and a fake kernel through random schedules of storms, slow writes, kill -9
// and clean restarts, renames and swaps, driver reloads, RDMA devices vanishing, policy flips
// A->B->A, save failures and a replaced lock file. After every write it checks the invariants of
// docs/remediation.md:
//   I1 writes per identity (and for the host's tcp_ecn) <= max_attempts between stable periods;
//   I2 no write while the device's newest read is older than the evidence's max age or shows a
//      storm, and none while a storm has run longer than that max age;
//   I3 no write without a durable ledger entry of an apply in progress;
//   I4 no write to another identity than the one planned;
//   I5 never a write from a process that does not hold the lock on the file its path names;
//   I6 no write while the device's policy rule cannot be decided (its RDMA device vanished).
// A failure prints its seed; ROCEQOS_SIM_SEED=<seed> replays that seed alone, and
// ROCEQOS_SIM_EVENTS=<n> sets the events per seed. The self-test removes each guard in turn
// (GateSeams) and shows that its invariant catches the removal.

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "exporter/qos/remediation_worker.h"
#include "tests/unit/support/forwarding_qos_port.h"

namespace roceqos {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

constexpr int kDevices = 3;
constexpr int kMaxAttempts = 3;
constexpr auto kSamplerPeriod = 250ms;  // the storm evidence's max age

// Thrown from inside a kernel call by a kill -9: unwinds the process's objects without running
// anything but destructors, as the kernel would end it. Not a std::exception: the worker's
// thread boundary does not catch it.
struct Killed {};

struct SimDevice {
  std::string identity;  // "pci:0000:0X:00.0", stable
  std::string netdev;    // changes with renames and swaps
  bool present = true;
  bool storm = false;
  TimePoint storm_since{};
  uint8_t pfc = 0x08;
  // The sampler's newest read of it: when, and whether it showed a storm.
  std::optional<TimePoint> read_at;
  bool read_storm = false;
  std::string rdma_device;  // mlx5_<i>; the policy has a rule for mlx5_0
  bool rdma_present = true;
  int attempts = 0;  // writes counted against I1 since it last proved stable
  std::optional<TimePoint> in_sync_since;
};

struct Violation {
  std::string invariant;
  std::string detail;
};

// The ledger's file, in memory: what a save made durable is what a new process loads.
class MemoryStore : public LedgerStore {
 public:
  std::string durable;  // the file's text; empty: no file
  bool fail_saves = false;
  Result<PersistedState> Load() override {
    if (durable.empty()) return PersistedState{};
    return ParseRemediationState(durable, path_);
  }
  Result<void> Save(const PersistedState& state) override {
    if (fail_saves) return MakeError(EIO, "simulated: the disk refuses the write");
    durable = SerializeRemediationState(state);
    return {};
  }
  const std::string& path() const override { return path_; }
  std::optional<PersistedDevice> Durable(const std::string& identity) const {
    auto state = ParseRemediationState(durable, path_);
    if (!state) return std::nullopt;
    auto it = state->devices.find(identity);
    if (it == state->devices.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::string path_ = "memory:remediation.json";
};

class Simulation;

// Policy A (PFC on 3) or B (PFC on 3 and 4), with tcp_ecn 1, and a rule for the device whose RDMA
// device is mlx5_0 that says the same: it can be decided only while mlx5_0 is listed.
std::shared_ptr<const PolicySet> Policies(const std::string& pfc) {
  const std::string text = "defaults: {pfc: " + pfc + ", tcp_ecn: 1}\ndevices:\n  - name: rdma0\n" +
                           "    match: {rdma_device: mlx5_0}\n    policy: {pfc: " + pfc + "}\n";
  Result<PolicySet> set = ParsePolicy(text, "simulation.yaml");
  EXPECT_TRUE(set.ok()) << set.error().message;
  return std::make_shared<const PolicySet>(std::move(*set));
}

// One exporter process: its worker (no thread: the simulation steps it) and its view of the lock.
struct Process : public StormWitness, public DeviceResolver, public LockWitness {
  Simulation* sim = nullptr;
  int id = 0;
  int lock_inode = 0;  // the inode its flock holds
  std::unique_ptr<RemediationWorker> worker;

  StormFacts Witness(const std::string& netdev, std::chrono::nanoseconds max_age) override;
  std::optional<ResolvedDevice> Resolve(const std::string& identity) override;
  bool StillHeld() override;
};

class Kernel {
 public:
  explicit Kernel(Simulation* sim) : sim_(sim) {}
  Observed<QosState> ReadDcb(const std::string& netdev);
  DcqcnState ReadDcqcn(const std::string&) { return {}; }
  RoceTosState ReadRoceTos(const std::string&, uint32_t) { return {}; }
  Observed<int> ReadTcpEcn();
  Observed<uint16_t> ReadStormTimeout(const std::string&) { return Observed<uint16_t>::Absent(); }
  Result<void> SetDcb(const std::string& netdev, const DcbWrite& write);
  Result<void> DeleteDcbApps(const std::string&, const std::vector<DcbApp>&) { return {}; }
  Result<void> WriteDcqcn(const std::string&, bool, int, bool) { return {}; }
  Result<void> WriteTcpEcn(int value);
  Result<void> WriteRoceTos(const std::string&, uint32_t, int) { return {}; }
  Result<void> WriteDcqcnParam(const std::string&, bool, const std::string&, uint64_t) {
    return {};
  }

 private:
  Simulation* sim_;
};

using Port = ForwardingQosPort<Kernel>;

class Simulation {
 public:
  Simulation(uint64_t seed, GateSeams seams) : rng_(seed), seams_(seams), kernel_(this) {
    for (int i = 0; i < kDevices; ++i) {
      SimDevice d;
      d.identity = "pci:0000:0" + std::to_string(i + 1) + ":00.0";
      d.netdev = "eth" + std::to_string(i);
      d.rdma_device = "mlx5_" + std::to_string(i);
      devices_.push_back(d);
    }
    policy_a_ = Policies("[3]");
    policy_b_ = Policies("[3, 4]");
    Start();
  }

  std::optional<Violation> Run(int events) {
    for (int i = 0; i < events && !violation_; ++i) Event();
    return violation_;
  }

  // ---- the world, as the fakes see it ----
  TimePoint now() const { return now_; }
  SimDevice* ByName(const std::string& netdev) {
    for (SimDevice& d : devices_)
      if (d.present && d.netdev == netdev) return &d;
    return nullptr;
  }
  SimDevice* ByIdentity(const std::string& identity) {
    for (SimDevice& d : devices_)
      if (d.present && d.identity == identity) return &d;
    return nullptr;
  }
  int lock_path_inode() const { return lock_path_inode_; }
  // The gate may ask for a read on demand, as production asks the sampler; a stalled sampler
  // does not answer.
  void SamplerRead(SimDevice& d) {
    if (sampler_stalled_) return;
    d.read_at = now_;
    d.read_storm = d.storm;
  }
  int tcp_ecn() const { return tcp_ecn_; }

  // A write reached the kernel: the invariants, then a kill or a slow device.
  void BeforeWrite(const std::string& netdev, bool host_wide) {
    CheckWrite(netdev, host_wide);
    if (kill_at_write_ > 0 && --kill_at_write_ == 0) throw Killed{};
    if (slow_write_) {
      Advance(*slow_write_);  // storms may begin on other devices meanwhile
      slow_write_.reset();
    }
  }
  void AfterWrite() {
    if (kill_after_write_) {
      kill_after_write_ = false;
      throw Killed{};
    }
  }

 private:
  // ---- processes ----
  void Start() {
    auto p = std::make_unique<Process>();
    p->sim = this;
    p->id = ++processes_started_;
    // flock on the file the path names now; a process that finds it held observes.
    if (lock_holders_.contains(lock_path_inode_)) return;
    p->lock_inode = lock_path_inode_;
    lock_holders_.insert(lock_path_inode_);
    RemediationWorker::Options o;
    o.remediation.mode = RemediationMode::kEnforce;
    o.remediation.max_attempts = kMaxAttempts;
    o.remediation.base_backoff = 30s;
    o.remediation.max_backoff = 120s;
    o.remediation.stable_reset = 600s;
    o.remediation.storm_evidence_max_age = kSamplerPeriod;
    o.remediation.boot_id = "sim-boot-" + std::to_string(boot_);
    o.remediation.seams = seams_;
    o.facts = {p.get(), p.get(), p.get()};
    o.store = &store_;
    o.thread = false;
    o.now = [this] { return now_; };
    o.remediator_now = o.now;
    o.deadline = 7s;
    p->worker = std::make_unique<RemediationWorker>(o, std::make_unique<Port>(&kernel_),
                                                    std::make_unique<Port>(&kernel_));
    processes_.push_back(std::move(p));
  }
  void Kill(size_t index) {
    lock_holders_.erase(processes_[index]->lock_inode);
    processes_.erase(processes_.begin() + static_cast<long>(index));
  }

  // ---- events ----
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool Chance(int percent) { return Pick(100) < percent; }

  void Event() {
    switch (Pick(20)) {
      case 0:
      case 1:
      case 2:
      case 3:
        return PostPass();
      case 4:
      case 5:
      case 6:
      case 7:
      case 8:
        return RunWorkers();
      case 9:
      case 10:
      case 11:
        return Advance(std::chrono::milliseconds(Pick(Chance(10) ? 200000 : 2000)));
      case 12: {
        SimDevice& d = devices_[Pick(kDevices)];
        d.storm = !d.storm;
        d.storm_since = now_;
        return;
      }
      case 13:  // DCBX, firmware or a person undoes the policy
        devices_[Pick(kDevices)].pfc = 0;
        if (Chance(30)) tcp_ecn_ = 0;
        return;
      case 14:
        return Chance(50) ? Swap() : Rename();
      case 15:
        return DriverReload();
      case 16:
        return Restart();
      case 17:
        if (Chance(50)) {
          policy_b_active_ = !policy_b_active_;
        } else {  // mlx5_ib unloaded or back: the rule that names mlx5_0 cannot be decided
          devices_[0].rdma_present = !devices_[0].rdma_present;
        }
        return;
      case 18:
        store_.fail_saves = Chance(30);
        return;
      default:
        return Hazard();
    }
  }

  void Hazard() {
    switch (Pick(5)) {
      case 0:
        slow_write_ = std::chrono::milliseconds(Pick(9000));
        return;
      case 1:
        kill_at_write_ = 1 + Pick(3);
        return;
      case 2:
        kill_after_write_ = true;
        return;
      case 3:
        sampler_stalled_ = !sampler_stalled_;
        return;
      default:
        // The lock file deleted and created again (a tmpfiles clean-up, a careless rm), then a
        // second instance starts and takes the new file.
        ++lock_path_inode_;
        if (Chance(50)) Start();
        return;
    }
  }

  void Advance(std::chrono::nanoseconds by) {
    const TimePoint end = now_ + by;
    while (now_ < end) {
      now_ = std::min(end, now_ + std::chrono::nanoseconds(kSamplerPeriod));
      for (SimDevice& d : devices_) {
        if (d.present) SamplerRead(d);
        TrackStable(d);
      }
    }
  }

  // Names swapped (two functions re-probed in the other order), often with the driver's defaults.
  void Swap() {
    SimDevice& a = devices_[Pick(kDevices)];
    SimDevice& b = devices_[Pick(kDevices)];
    std::swap(a.netdev, b.netdev);
    if (Chance(50)) a.pfc = b.pfc = 0;
  }
  void Rename() { devices_[Pick(kDevices)].netdev = "ren" + std::to_string(++renames_); }
  void DriverReload() {
    SimDevice& d = devices_[Pick(kDevices)];
    d.present = !d.present;
    d.read_at.reset();
    if (d.present) d.pfc = Chance(50) ? 0 : d.pfc;  // the driver's defaults, or kept
  }
  void Restart() {
    if (processes_.empty() || Chance(50)) {
      if (!processes_.empty()) Kill(0);  // kill -9, or a clean stop: both leave only the file
      if (Chance(10)) ++boot_;           // a reboot: the monotonic clock of another boot
      Start();
    } else {
      Kill(static_cast<size_t>(Pick(static_cast<int>(processes_.size()))));
    }
  }

  // The sampler's pass: its view of every present device, as stale as the schedule makes it.
  void PostPass() {
    RemediationPass pass;
    const auto& policies = policy_b_active_ ? policy_b_ : policy_a_;
    for (SimDevice& d : devices_) {
      if (!d.present) continue;
      pass.present.emplace_back(d.netdev, d.identity);
      auto device = std::make_shared<Device>();
      device->name = d.netdev;
      device->pci_address = d.identity.substr(4);
      device->role = DeviceRole::kPf;
      device->pci_vendor = 0x15b3;
      device->oper_state = OperState::kUp;
      if (d.rdma_present) {
        RdmaPort port;
        port.device = d.rdma_device;
        port.port = 1;
        device->rdma_ports.push_back(port);
      }
      const PolicyResolution resolution = policies->ResolveChecked(*device);
      const auto policy = std::shared_ptr<const QosPolicy>(policies, resolution.policy);
      auto state = std::make_shared<QosDeviceState>();
      state->observed = Observe(d);
      state->drift = EvaluateDrift(*policy, state->observed);
      RemediationItem item;
      item.context.netdev = d.netdev;
      item.context.identity = d.identity;
      item.context.role = DeviceRole::kPf;
      item.context.oper_up = true;
      item.context.storm = d.read_storm ? StormGuard::kStorm : StormGuard::kClear;
      item.context.policy_resolved = resolution.resolved;
      if (d.rdma_present) item.context.rdma_devices.push_back(d.rdma_device);
      item.device = device;
      item.policy = policy;
      item.state = state;
      pass.items.push_back(std::move(item));
    }
    for (auto& p : processes_) p->worker->Post(pass);
    // A rename or a swap racing the pass just posted: its items name the old owners.
    if (Chance(10)) Swap();
  }

  void RunWorkers() {
    for (size_t i = 0; i < processes_.size(); ++i) {
      writer_ = processes_[i].get();
      written_this_pass_.clear();
      try {
        processes_[i]->worker->RunPending();
      } catch (const Killed&) {
        Kill(i);
        Start();  // Restart=on-failure
        return;
      }
    }
    writer_ = nullptr;
  }

  ObservedQos Observe(const SimDevice& d) const {
    ObservedQos o;
    QosState s;
    s.pfc = PfcState{8, d.pfc, 0, 7};
    o.dcb = Observed<QosState>::Ok(s);
    o.tcp_ecn = Observed<int>::Ok(tcp_ecn_);
    return o;
  }

  // I1's reset: a device that stayed in sync with either policy for the stable period may be
  // given attempts again, as the ledger does after stable_reset (either: the ledger cannot tell
  // a flip it did not observe).
  void TrackStable(SimDevice& d) {
    const bool in_sync = d.present && (d.pfc == 0x08 || d.pfc == 0x18) && tcp_ecn_ == 1;
    if (!in_sync) {
      d.in_sync_since.reset();
    } else if (!d.in_sync_since) {
      d.in_sync_since = now_;
    } else if (now_ - *d.in_sync_since >= 600s) {
      d.attempts = 0;
      host_attempts_ = 0;
    }
  }

  void Fail(std::string invariant, std::string detail) {
    if (!violation_) violation_ = Violation{std::move(invariant), std::move(detail)};
  }

  void CheckWrite(const std::string& netdev, bool host_wide) {
    const std::string where =
        " (process " + std::to_string(writer_ ? writer_->id : -1) + ", " + netdev + ")";
    if (writer_ == nullptr || writer_->lock_inode != lock_path_inode_)
      return Fail("I5", "a write from a process without the lock" + where);
    SimDevice* d = ByName(netdev);
    if (d == nullptr) return Fail("I4", "a write to a netdev no device has" + where);
    if (planned_identity_ && *planned_identity_ != d->identity)
      return Fail("I4", "planned for " + *planned_identity_ + ", landed on " + d->identity + where);
    if (!d->read_at || now_ - *d->read_at > kSamplerPeriod || d->read_storm)
      return Fail("I2", "no fresh storm-free read" + where);
    if (d->storm && now_ - d->storm_since > kSamplerPeriod)
      return Fail("I2", "a storm has run longer than the evidence's max age" + where);
    if (!d->rdma_present)
      return Fail("I6", "a write while the device's rdma_device rule cannot be decided" + where);
    const std::string key = host_wide ? std::string(kHostIdentity) : d->identity;
    std::optional<PersistedDevice> durable = store_.Durable(key);
    if (!durable || !durable->apply_in_progress)
      return Fail("I3", "no durable ledger entry of an apply in progress for " + key + where);
    int& attempts = host_wide ? host_attempts_ : d->attempts;
    if (!written_this_pass_.contains(key)) {
      written_this_pass_.insert(key);
      if (++attempts > kMaxAttempts)
        return Fail("I1", key + " written in attempt " + std::to_string(attempts) + where);
    }
  }

 public:
  // Which identity the worker is writing for: the kernel sees only netdev names; the gate names
  // the planned identity when it resolves it before each write.
  void Planned(const std::string& identity) { planned_identity_ = identity; }
  SimDevice* Stepping() { return planned_identity_ ? ByIdentity(*planned_identity_) : nullptr; }
  void SetPfc(SimDevice& d, uint8_t mask) { d.pfc = mask; }
  void SetTcpEcn(int value) { tcp_ecn_ = value; }

 private:
  std::mt19937_64 rng_;
  GateSeams seams_;
  Kernel kernel_;
  MemoryStore store_;
  std::vector<SimDevice> devices_;
  std::vector<std::unique_ptr<Process>> processes_;
  std::shared_ptr<const PolicySet> policy_a_;
  std::shared_ptr<const PolicySet> policy_b_;
  bool policy_b_active_ = false;
  TimePoint now_ = TimePoint(1h);
  int tcp_ecn_ = 1;
  int host_attempts_ = 0;
  int boot_ = 0;
  int renames_ = 0;
  int processes_started_ = 0;
  int lock_path_inode_ = 1;
  std::set<int> lock_holders_;
  bool sampler_stalled_ = false;
  std::optional<std::chrono::nanoseconds> slow_write_;
  int kill_at_write_ = 0;
  bool kill_after_write_ = false;
  Process* writer_ = nullptr;
  std::optional<std::string> planned_identity_;
  std::set<std::string> written_this_pass_;
  std::optional<Violation> violation_;
};

StormFacts Process::Witness(const std::string& netdev, std::chrono::nanoseconds max_age) {
  SimDevice* d = sim->ByName(netdev);
  if (d == nullptr) return {};
  if (!d->read_at || sim->now() - *d->read_at > max_age) sim->SamplerRead(*d);
  if (!d->read_at) return {};
  return {d->read_storm ? StormGuard::kStorm : StormGuard::kClear, d->read_at};
}

std::optional<ResolvedDevice> Process::Resolve(const std::string& identity) {
  sim->Planned(identity);  // the gate asks for the identity its attempt was planned for
  SimDevice* d = sim->ByIdentity(identity);
  if (d == nullptr) return std::nullopt;
  ResolvedDevice resolved{d->netdev, 0, {}};
  if (d->rdma_present) resolved.rdma_devices.push_back(d->rdma_device);
  return resolved;
}

bool Process::StillHeld() { return lock_inode == sim->lock_path_inode(); }

Observed<QosState> Kernel::ReadDcb(const std::string& netdev) {
  SimDevice* d = sim_->ByName(netdev);
  if (d == nullptr) return Observed<QosState>::Failed("no such device", ENODEV);
  QosState s;
  s.pfc = PfcState{8, d->pfc, 0, 7};
  return Observed<QosState>::Ok(s);
}

Observed<int> Kernel::ReadTcpEcn() { return Observed<int>::Ok(sim_->tcp_ecn()); }

Result<void> Kernel::SetDcb(const std::string& netdev, const DcbWrite& write) {
  sim_->BeforeWrite(netdev, false);
  SimDevice* d = sim_->ByName(netdev);
  if (d == nullptr) return MakeError(ENODEV, "no such device");
  if (write.pfc) sim_->SetPfc(*d, write.pfc->enabled_mask);
  sim_->AfterWrite();
  return {};
}

Result<void> Kernel::WriteTcpEcn(int value) {
  SimDevice* d = sim_->Stepping();
  sim_->BeforeWrite(d ? d->netdev : "", true);
  sim_->SetTcpEcn(value);
  sim_->AfterWrite();
  return {};
}

int EnvInt(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::atoi(text) : fallback;
}

// 20 seeds × 50,000 events: 1 M events per run.
TEST(EnforceSimulation, NoScheduleBreaksTheInvariants) {
  const int events = EnvInt("ROCEQOS_SIM_EVENTS", 50000);
  std::vector<uint64_t> seeds;
  if (const char* one = std::getenv("ROCEQOS_SIM_SEED")) {
    seeds.push_back(std::strtoull(one, nullptr, 10));
  } else {
    for (uint64_t s = 1; s <= 20; ++s) seeds.push_back(s);
  }
  for (uint64_t seed : seeds) {
    Simulation sim(seed, {});
    std::optional<Violation> v = sim.Run(events);
    ASSERT_FALSE(v.has_value()) << "seed " << seed << " (replay: ROCEQOS_SIM_SEED=" << seed
                                << "): " << v->invariant << ": " << v->detail;
  }
}

// Each guard removed in turn: the invariant it keeps must catch it, within the events of one
// default seed.
TEST(EnforceSimulation, RemovingAGuardIsCaughtByItsInvariant) {
  struct Case {
    const char* guard;
    GateSeams seams;
    const char* invariant;
  };
  for (const Case& c : std::vector<Case>{
           {"identity", {.skip_identity = true}, "I4"},
           {"storm", {.skip_storm = true}, "I2"},
           {"lock", {.skip_lock = true}, "I5"},
           {"ledger", {.skip_ledger = true}, "I1"},
           {"durable record", {.skip_durable_record = true}, "I3"},
       }) {
    bool caught = false;
    for (uint64_t seed = 1; seed <= 5 && !caught; ++seed) {
      Simulation sim(seed, c.seams);
      std::optional<Violation> v = sim.Run(50000);
      caught = v && v->invariant == c.invariant;
      if (v && !caught) ADD_FAILURE() << c.guard << ": " << v->invariant << " " << v->detail;
    }
    EXPECT_TRUE(caught) << "removing the " << c.guard << " guard went unnoticed";
  }
}

}  // namespace
}  // namespace roceqos
