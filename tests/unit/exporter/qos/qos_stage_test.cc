// The QoS engine inside the real sampler: the stage fills the snapshot, a notification makes the
// sampler thread take a sample at once.

#include "exporter/qos/qos_stage.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>

#include <algorithm>

#include "exporter/core/qos_state.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/write_facts_fake.h"

namespace roceqos {
namespace {

// Every write these tests make finds its device where planned, no storm, the lock held.
testing::FakeWriteFacts& PermissiveFacts() {
  static testing::FakeWriteFacts facts;
  return facts;
}

using namespace std::chrono_literals;
using testing::FakeEthtool;
using testing::FakeInventory;
using testing::MakeDevice;

class FakeQos : public QosReader {
 public:
  std::map<std::string, QosState> dcb;
  std::map<std::string, int> dcb_reads;
  Observed<QosState> ReadDcb(const std::string& netdev) override {
    ++dcb_reads[netdev];
    auto it = dcb.find(netdev);
    return it == dcb.end() ? Observed<QosState>::Absent() : Observed<QosState>::Ok(it->second);
  }
  DcqcnState ReadDcqcn(const std::string&) override { return {}; }
  RoceTosState ReadRoceTos(const std::string&, uint32_t) override { return {}; }
  Observed<int> ReadTcpEcn() override { return Observed<int>::Ok(1); }
  Observed<uint16_t> ReadStormTimeout(const std::string&) override {
    return Observed<uint16_t>::Absent();
  }
};

QosState PfcOn3() {
  QosState s;
  s.pfc = PfcState{8, 0x08, 0, 7};
  for (uint16_t d = 0; d < 64; ++d)
    s.apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(d / 8), d});
  return s;
}

struct World {
  FakeQos* qos = nullptr;
  FakeEthtool* ethtool = nullptr;
  std::unique_ptr<QosEngine> engine;
  std::unique_ptr<Sampler> sampler;

  World(std::chrono::nanoseconds period, QosStage::StormProbe storm = {},
        RemediationMode mode = RemediationMode::kOff) {
    SamplerSources sources;
    auto inventory = std::make_unique<FakeInventory>();
    inventory->inventory.devices.push_back(MakeDevice("ens1f0np0", 2));
    inventory->inventory.devices.push_back(MakeDevice("ens1f1np1", 3));
    auto fake_ethtool = std::make_unique<FakeEthtool>();
    fake_ethtool->SetNames("ens1f0np0", {"rx_prio3_pause"});
    fake_ethtool->SetNames("ens1f1np1", {"rx_prio3_pause"});
    ethtool = fake_ethtool.get();
    sources.inventory = std::move(inventory);
    sources.ethtool = std::move(fake_ethtool);
    sources.selected_by_default = [](const Device&) { return true; };
    SamplerOptions options;
    options.period = period;
    sampler = std::make_unique<Sampler>(std::move(options), std::move(sources));

    auto reader = std::make_unique<FakeQos>();
    qos = reader.get();
    qos->dcb["ens1f0np0"] = PfcOn3();
    qos->dcb["ens1f1np1"] = PfcOn3();
    QosEngineOptions qos_options;
    qos_options.poll_interval = 1h;
    qos_options.remediation.mode = mode;
    qos_options.write_facts = PermissiveFacts().Facts();
    // Dry-run neither reads nor writes on the worker: a reader of its own that nothing calls.
    QosIo worker_io;
    if (mode != RemediationMode::kOff) worker_io.reader = std::make_unique<FakeQos>();
    engine =
        std::make_unique<QosEngine>(qos_options, std::make_shared<const PolicySet>(DefaultPolicy()),
                                    std::move(reader), std::move(worker_io));
    sampler->AddStage(std::make_unique<QosStage>(engine.get(), std::move(storm)));
  }
};

TEST(QosStage, FillsEveryDeviceAndTheGlobalStateAndReusesUnchangedStates) {
  World w(250ms);
  w.sampler->SampleOnce();
  auto first = w.sampler->Latest();
  ASSERT_EQ(first->devices.size(), 2u);
  for (const auto& d : first->devices) {
    ASSERT_NE(d.qos, nullptr) << d.device->name;
    EXPECT_FALSE(d.qos->drift.fields.empty());
  }
  ASSERT_NE(first->qos, nullptr);
  EXPECT_EQ(first->qos->policy_source, "embedded default");

  w.sampler->SampleOnce();
  auto second = w.sampler->Latest();
  EXPECT_EQ(second->devices[0].qos, first->devices[0].qos) << "no re-read within the poll interval";
  EXPECT_EQ(w.qos->dcb_reads["ens1f0np0"], 1);
  EXPECT_EQ(second->sources.count("qos"), 1u) << "the stage reports its own duration";
}

TEST(QosStage, StormProbeSeesTheDraftDevice) {
  std::vector<std::string> probed;
  World w(250ms, [&](const DeviceSnapshot& d) {
    probed.push_back(d.device->name);
    return StormGuard::kClear;
  });
  w.sampler->SampleOnce();
  EXPECT_EQ(probed, (std::vector<std::string>{"ens1f0np0", "ens1f1np1"}));
}

// The detection path: notification -> engine -> RequestSampleNow -> a sample well before the end
// of a long period, whose snapshot shows the change.
TEST(QosStage, NotificationWakesTheSamplerBeforeTheEndOfItsPeriod) {
  World w(1h);  // without a wake-up the second sample would come an hour later
  w.sampler->Start();
  ASSERT_TRUE(w.sampler->WaitForSequence(1, std::chrono::steady_clock::now() + 10s));
  const uint64_t before = w.sampler->Latest()->sequence;

  w.qos->dcb["ens1f1np1"].pfc->enabled_mask = 0;  // `dcb pfc set dev ... prio-pfc 3:off`
  ChangeEvent e;
  e.kind = ChangeEvent::Kind::kDcb;
  e.netdev = "ens1f1np1";
  e.received = std::chrono::steady_clock::now();
  w.engine->OnChange(e);
  w.sampler->Wake(false);

  ASSERT_TRUE(w.sampler->WaitForSequence(before + 1, std::chrono::steady_clock::now() + 10s));
  auto s = w.sampler->Latest();
  w.sampler->Stop();
  const DeviceSnapshot* d = s->FindDevice("ens1f1np1");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->qos->drift.Find(QosField::kPfc)->status, FieldStatus::kDrift);
  ASSERT_TRUE(s->qos->last_detection_latency_seconds);
  EXPECT_LT(*s->qos->last_detection_latency_seconds, 10.0);
}

// A PFC change the exporter only finds by reading DCB (no notification, or its own write) may
// have rewritten mlx5's ethtool string set at the same size: the names are re-read.
TEST(QosStage, PfcChangeFoundByTheStageInvalidatesTheEthtoolNames) {
  World w(250ms);
  w.sampler->SampleOnce();
  w.ethtool->events.clear();
  w.sampler->SampleOnce();
  EXPECT_EQ(std::count_if(w.ethtool->events.begin(), w.ethtool->events.end(),
                          [](const std::string& e) { return e.starts_with("names"); }),
            0)
      << "nothing changed";
  w.qos->dcb["ens1f1np1"].pfc->enabled_mask = 0x10;
  ChangeEvent e;
  e.kind = ChangeEvent::Kind::kDcb;
  e.netdev = "ens1f1np1";
  w.engine->OnChange(e);    // only the engine hears of it: the stage re-reads DCB
  w.sampler->SampleOnce();  // the stage finds the change and invalidates the names
  w.ethtool->events.clear();
  w.sampler->SampleOnce();
  EXPECT_EQ(w.ethtool->events, (std::vector<std::string>{"sample ens1f0np0", "names ens1f1np1",
                                                         "sample ens1f1np1", "names ens1f1np1"}));
}

// Remediation runs on the engine's worker: the sample that posts a pass does not wait for it, a
// later sample shows its outcome.
TEST(QosStage, RemediationOutcomeReachesALaterSnapshot) {
  World w(
      250ms, [](const DeviceSnapshot&) { return StormGuard::kClear; }, RemediationMode::kDryRun);
  w.qos->dcb["ens1f1np1"].pfc->enabled_mask = 0;
  w.sampler->SampleOnce();
  ASSERT_TRUE(w.engine->WaitForRemediationIdle(std::chrono::steady_clock::now() + 10s));
  w.sampler->SampleOnce();
  const DeviceSnapshot* d = w.sampler->Latest()->FindDevice("ens1f1np1");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->qos->remediation, RemediationState::kDryRun);
  EXPECT_EQ(w.sampler->Latest()->FindDevice("ens1f0np0")->qos->remediation,
            RemediationState::kInSync);
}

}  // namespace
}  // namespace roceqos
