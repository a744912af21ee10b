// The remediation worker alone: one pending pass at most, the deadline between devices, and a stop
// that waits for the step under way only.

#include "exporter/qos/remediation_worker.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "tests/unit/support/forwarding_qos_port.h"
#include "tests/unit/support/write_facts_fake.h"

namespace roceqos {
namespace {

// Every write these tests make finds its device where planned, no storm, the lock held.
testing::FakeWriteFacts& PermissiveFacts() {
  static testing::FakeWriteFacts facts;
  return facts;
}

using namespace std::chrono_literals;

// One device state per netdev; SetDcb of a held device waits until the test releases it (30 s at
// most, so a failed test cannot hang the join).
class BlockingHost : public QosReader, public QosWriter {
 public:
  Observed<QosState> ReadDcb(const std::string& netdev) override {
    std::lock_guard lock(mu_);
    auto it = dcb_.find(netdev);
    return it == dcb_.end() ? Observed<QosState>::Absent() : Observed<QosState>::Ok(it->second);
  }
  DcqcnState ReadDcqcn(const std::string&) override { return {}; }
  RoceTosState ReadRoceTos(const std::string&, uint32_t) override { return {}; }
  Observed<int> ReadTcpEcn() override { return Observed<int>::Ok(1); }
  Observed<uint16_t> ReadStormTimeout(const std::string&) override {
    return Observed<uint16_t>::Absent();
  }

  Result<void> SetDcb(const std::string& netdev, const DcbWrite& w) override {
    std::unique_lock lock(mu_);
    if (held_) {
      entered_ = true;
      cv_.notify_all();
      cv_.wait_for(lock, 30s, [&] { return !held_; });
    }
    writes_.push_back(netdev);
    if (w.pfc) dcb_[netdev].pfc = w.pfc;
    return {};
  }
  Result<void> DeleteDcbApps(const std::string&, const std::vector<DcbApp>&) override { return {}; }
  Result<void> WriteDcqcn(const std::string&, bool, int, bool) override { return {}; }
  Result<void> WriteTcpEcn(int) override { return {}; }
  Result<void> WriteRoceTos(const std::string&, uint32_t, int) override { return {}; }
  Result<void> WriteDcqcnParam(const std::string&, bool, const std::string&, uint64_t) override {
    return {};
  }

  void Set(const std::string& netdev, uint8_t pfc_mask) {
    std::lock_guard lock(mu_);
    QosState s;
    s.pfc = PfcState{8, pfc_mask, 0, 7};
    dcb_[netdev] = s;
  }
  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
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
  std::vector<std::string> writes() {
    std::lock_guard lock(mu_);
    return writes_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, QosState> dcb_;
  std::vector<std::string> writes_;
  bool held_ = false, entered_ = false;
};

// The worker owns its reader and writer; both reach the test's host.
using Port = ForwardingQosPort<BlockingHost>;

// Only PFC is checked: the fake host has nothing else.
std::shared_ptr<const QosPolicy> PfcOn3() {
  auto policy = std::make_shared<QosPolicy>();
  policy->pfc = 0x08;
  return policy;
}

struct World {
  BlockingHost host;
  std::atomic<int64_t> clock_ns{0};
  const std::chrono::steady_clock::time_point base = std::chrono::steady_clock::now();
  std::unique_ptr<RemediationWorker> worker;

  World() {
    RemediationWorker::Options options;
    options.remediation.mode = RemediationMode::kEnforce;
    options.facts = PermissiveFacts().Facts();
    options.deadline = 7s;
    options.now = [this] { return base + std::chrono::nanoseconds(clock_ns.load()); };
    worker = std::make_unique<RemediationWorker>(options, std::make_unique<Port>(&host),
                                                 std::make_unique<Port>(&host));
  }
  ~World() {
    host.Release();  // on every way out, before the worker joins
    worker.reset();
  }

  // The sampler's view of a device: what was read, its drift against PfcOn3, a clear storm guard.
  RemediationItem Item(const std::string& netdev, uint8_t pfc_mask,
                       StormGuard storm = StormGuard::kClear) {
    auto device = std::make_shared<Device>();
    device->name = netdev;
    device->role = DeviceRole::kPf;
    device->oper_state = OperState::kUp;
    RemediationItem item;
    item.context.netdev = netdev;
    item.context.identity = DeviceIdentity(*device);
    item.context.role = DeviceRole::kPf;
    item.context.oper_up = true;
    item.context.storm = storm;
    item.device = device;
    item.policy = PfcOn3();
    auto state = std::make_shared<QosDeviceState>();
    QosState dcb;
    dcb.pfc = PfcState{8, pfc_mask, 0, 7};
    state->observed.dcb = Observed<QosState>::Ok(dcb);
    state->drift = EvaluateDrift(*item.policy, state->observed);
    item.state = state;
    return item;
  }

  static RemediationPass Pass(std::vector<RemediationItem> items,
                              std::vector<std::string> present) {
    RemediationPass pass;
    pass.items = std::move(items);
    for (const auto& netdev : present) pass.present.emplace_back(netdev, "netdev:" + netdev);
    return pass;
  }

  bool Idle() { return worker->WaitIdle(std::chrono::steady_clock::now() + 10s); }
};

const std::vector<std::string> kAll = {"sim0", "sim1", "sim2"};

TEST(RemediationWorker, ANewerPassReplacesTheOneStillWaiting) {
  World w;
  for (const auto& n : kAll) w.host.Set(n, 0x08);
  w.host.Set("sim0", 0);
  w.host.Hold();
  w.worker->Post(World::Pass({w.Item("sim0", 0)}, kAll));
  ASSERT_TRUE(w.host.WaitEntered());
  ASSERT_TRUE(w.worker->Busy());
  EXPECT_EQ(w.worker->Busy()->netdev, "sim0");

  // Waiting: sim1 held back by a storm, sim2 in sync. Then a newer pass for sim1 alone.
  w.worker->Post(World::Pass({w.Item("sim1", 0, StormGuard::kStorm), w.Item("sim2", 0x08)}, kAll));
  w.worker->Post(World::Pass({w.Item("sim1", 0x08)}, kAll));
  w.host.Release();
  ASSERT_TRUE(w.Idle());

  auto results = w.worker->Results();
  EXPECT_EQ(results->passes_run, 2u) << "the blocked pass and one merged pass";
  ASSERT_EQ(results->devices.count("sim1"), 1u);
  EXPECT_EQ(results->devices.at("sim1").state, RemediationState::kInSync) << "the newer input won";
  EXPECT_EQ(results->devices.at("sim1").pass, 2u);
  ASSERT_EQ(results->devices.count("sim2"), 1u) << "only the older pass had sim2: kept";
  EXPECT_EQ(results->devices.at("sim2").pass, 2u);
  EXPECT_EQ(results->devices.at("sim0").state, RemediationState::kActed);
  ASSERT_NE(results->devices.at("sim0").read, nullptr) << "the read after the write";
  EXPECT_EQ(results->devices.at("sim0").read->dcb.value.pfc->enabled_mask, 0x08);
  EXPECT_EQ(w.host.writes(), (std::vector<std::string>{"sim0"}));
}

TEST(RemediationWorker, APassPastItsDeadlineLeavesTheRestToTheNext) {
  World w;
  w.host.Set("sim0", 0);
  w.host.Set("sim1", 0);
  w.host.Hold();
  w.worker->Post(World::Pass({w.Item("sim0", 0), w.Item("sim1", 0)}, kAll));
  ASSERT_TRUE(w.host.WaitEntered());
  w.clock_ns += std::chrono::nanoseconds(8s).count();
  w.host.Release();
  ASSERT_TRUE(w.Idle());
  auto results = w.worker->Results();
  EXPECT_EQ(results->passes_run, 2u);
  EXPECT_EQ(results->devices.at("sim0").pass, 1u);
  EXPECT_EQ(results->devices.at("sim1").pass, 2u) << "sim1 went out in a pass of its own";
  EXPECT_EQ(w.host.writes(), (std::vector<std::string>{"sim0", "sim1"}));
}

TEST(RemediationWorker, StopWaitsForTheStepUnderWayAndStartsNoOther) {
  World w;
  w.host.Set("sim0", 0);
  w.host.Set("sim1", 0);
  w.host.Hold();
  w.worker->Post(World::Pass({w.Item("sim0", 0), w.Item("sim1", 0)}, kAll));
  ASSERT_TRUE(w.host.WaitEntered());
  std::thread stopper([&] { w.worker->Stop(); });
  ASSERT_TRUE(w.Idle()) << "Stop was asked for";
  w.host.Release();
  stopper.join();
  EXPECT_EQ(w.host.writes(), (std::vector<std::string>{"sim0"}));
  EXPECT_FALSE(w.worker->Busy());
}

TEST(RemediationWorker, DevicesNoLongerSelectedAreForgotten) {
  World w;
  w.host.Set("sim0", 0x08);
  w.host.Set("sim1", 0x08);
  w.worker->Post(World::Pass({w.Item("sim0", 0x08), w.Item("sim1", 0x08)}, kAll));
  ASSERT_TRUE(w.Idle());
  EXPECT_EQ(w.worker->Results()->devices.size(), 2u);
  w.worker->Post(World::Pass({}, {"sim1"}));
  ASSERT_TRUE(w.Idle());
  auto results = w.worker->Results();
  EXPECT_EQ(results->devices.count("sim0"), 0u);
  EXPECT_EQ(results->devices.at("sim1").state, RemediationState::kInSync);
}

}  // namespace
}  // namespace roceqos
