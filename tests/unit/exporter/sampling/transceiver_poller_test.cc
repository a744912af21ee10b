#include "exporter/sampling/transceiver_poller.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/log_event.h"
#include "collectors/transceiver/cmis.h"
#include "exporter/sampling/sampler.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/module_pages.h"

namespace roceqos {
namespace {

using testing_support::LoadModulePagesFixture;

// Serves one page image per netdev; a netdev without one answers EOPNOTSUPP (no module EEPROM),
// and a netdev can be made to fail with an errno. Counts reads per netdev.
class FakeIo : public ModuleEepromIo {
 public:
  Result<std::vector<uint8_t>> ReadHalfPage(const std::string& ifname,
                                            ModulePageAddress a) override {
    std::lock_guard lock(mu);
    ++reads[ifname];
    if (auto f = failures.find(ifname); f != failures.end())
      return MakeError(f->second, "injected");
    auto module = modules.find(ifname);
    if (module == modules.end()) return MakeError(EOPNOTSUPP, "no module EEPROM");
    // As the kernel reader on a kernel before 5.13: the ioctl's flat image of a CMIS module
    // (SFF-8636 layout, 256 bytes) has the lower page and page 00h only.
    const bool via_ioctl = ioctl_netdevs.contains(ifname);
    if (via_ioctl && a.upper && a.page != 0x00 && IsCmisIdentifier(module->second.lower[0])) {
      return MakeError(EOPNOTSUPP, "not in the ioctl's flat image");
    }
    last_method = via_ioctl ? ModuleAccessMethod::kIoctl : ModuleAccessMethod::kNetlink;
    if (!a.upper) return module->second.lower;
    auto page = module->second.upper.find(a.page);
    if (page == module->second.upper.end()) return MakeError(EINVAL, "no such page");
    return page->second;
  }
  ModuleAccessMethod LastMethod() const override { return last_method; }
  std::string FallbackReason() const override { return "netlink: Operation not supported"; }

  std::mutex mu;
  std::set<std::string> ioctl_netdevs;
  ModuleAccessMethod last_method = ModuleAccessMethod::kNetlink;
  std::map<std::string, ModulePages> modules;
  std::map<std::string, int> failures;
  std::map<std::string, int> reads;
};

ModulePages Fixture(const char* name) {
  auto pages = LoadModulePagesFixture(name);
  EXPECT_TRUE(pages.ok()) << pages.error().message;
  return pages.ok() ? *pages : ModulePages{};
}

struct Harness {
  FakeIo* io = nullptr;
  std::vector<std::string> netdevs;
  std::unique_ptr<TransceiverPoller> poller;

  explicit Harness(TransceiverPollerOptions options = {}) {
    auto fake = std::make_unique<FakeIo>();
    io = fake.get();
    io->modules["sim0"] = Fixture("qsfp28_sr4.pages");
    io->modules["sim1"] = Fixture("qsfpdd_sr8_cmis.pages");
    netdevs = {"sim0", "sim1", "veth0"};
    poller =
        std::make_unique<TransceiverPoller>(options, std::move(fake), [this] { return netdevs; });
  }
};

TEST(TransceiverPoller, NothingPublishedBeforeTheFirstRound) {
  Harness h;
  EXPECT_EQ(h.poller->Latest(), nullptr);
}

TEST(TransceiverPoller, PublishesEachModuleAndLeavesNetdevsWithoutOneOut) {
  Harness h({.interval = std::chrono::seconds(7), .serial_numbers = true});
  h.poller->PollOnce();
  auto state = h.poller->Latest();
  ASSERT_NE(state, nullptr);
  ASSERT_EQ(state->modules.size(), 2u);
  EXPECT_EQ(state->modules.at("sim0").module.spec, ModuleSpec::kSff8636);
  EXPECT_EQ(state->modules.at("sim1").module.spec, ModuleSpec::kCmis);
  EXPECT_EQ(state->modules.at("sim1").module.lanes.size(), 8u);
  EXPECT_FALSE(state->modules.contains("veth0"));  // EOPNOTSUPP: absent, not failed
  EXPECT_EQ(state->reads, 3u);
  for (const auto& [reason, count] : state->errors) EXPECT_EQ(count, 0u) << reason;
  EXPECT_EQ(state->errors.size(), std::size(kErrorReasonNames));  // every reason, at 0
  EXPECT_DOUBLE_EQ(state->interval_seconds, 7);
  EXPECT_TRUE(state->serial_numbers);
  // One round reads exactly the pages each spec needs: SFF-8636 3, CMIS 5, veth 1 (refused).
  EXPECT_EQ(h.io->reads["sim0"], 3);
  EXPECT_EQ(h.io->reads["sim1"], 5);
  EXPECT_EQ(h.io->reads["veth0"], 1);
}

// Captures what the exporter logs (the default logger) while alive.
class LogCapture {
 public:
  LogCapture()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64)),
        previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink_));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  /// The records logged with message `msg`, as field maps.
  std::vector<std::map<std::string, std::string>> With(std::string_view msg) const {
    std::vector<std::map<std::string, std::string>> out;
    for (const auto& raw : sink_->last_raw()) {
      const std::string payload(raw.payload.data(), raw.payload.size());
      DecodedLogRecord record = DecodeLogRecord(payload);
      if (record.msg != msg) continue;
      auto& fields = out.emplace_back();
      for (const DecodedLogField& f : record.fields)
        fields[std::string(f.key)] = std::string(f.value);
      fields["level"] = std::string(spdlog::level::to_string_view(raw.level).data());
    }
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(TransceiverPoller, IoctlFallbackIsRecordedPerNetdevAndLoggedOnce) {
  LogCapture log;
  Harness h;
  h.io->ioctl_netdevs = {"sim0", "sim1"};  // a kernel without ETHTOOL_MSG_MODULE_EEPROM_GET
  h.poller->PollOnce();
  auto state = h.poller->Latest();
  // SFF-8636: pages 00h-03h are all in the flat image; nothing is lost.
  const TransceiverReading& sff = state->modules.at("sim0");
  EXPECT_EQ(sff.access.method, ModuleAccessMethod::kIoctl);
  EXPECT_TRUE(sff.access.unread_pages.empty());
  EXPECT_EQ(sff.module.lanes.size(), 4u);
  EXPECT_TRUE(sff.module.thresholds.has_value());
  // CMIS: only the lower page and page 00h; module monitors stay, lanes and thresholds go.
  const TransceiverReading& cmis = state->modules.at("sim1");
  EXPECT_EQ(cmis.access.method, ModuleAccessMethod::kIoctl);
  EXPECT_EQ(cmis.access.unread_pages, (std::vector<uint8_t>{0x01, 0x02, 0x11}));
  EXPECT_EQ(cmis.access.fallback_reason, "netlink: Operation not supported");
  EXPECT_TRUE(cmis.module.lanes.empty());
  EXPECT_FALSE(cmis.module.thresholds.has_value());
  EXPECT_TRUE(cmis.module.temperature_celsius.has_value());
  EXPECT_TRUE(cmis.module.supply_voltage_volts.has_value());
  for (const auto& [reason, count] : state->errors) EXPECT_EQ(count, 0u) << reason;

  auto logged = log.With("transceiver via ioctl");
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_EQ(logged[0]["netdev"], "sim0");
  EXPECT_EQ(logged[0]["unread_pages"], "none");
  EXPECT_EQ(logged[0]["level"], "warning");
  EXPECT_EQ(logged[1]["netdev"], "sim1");
  EXPECT_EQ(logged[1]["unread_pages"], "01h 02h 11h");
  EXPECT_EQ(logged[1]["reason"], "netlink: Operation not supported");

  // Once per netdev, not once per round; netlink again is not logged, a new fallback is.
  h.poller->PollOnce();
  EXPECT_EQ(log.With("transceiver via ioctl").size(), 2u);
  h.io->ioctl_netdevs = {"sim0"};
  h.poller->PollOnce();
  EXPECT_EQ(h.poller->Latest()->modules.at("sim1").access.method, ModuleAccessMethod::kNetlink);
  EXPECT_TRUE(h.poller->Latest()->modules.at("sim1").access.unread_pages.empty());
  EXPECT_EQ(log.With("transceiver via ioctl").size(), 2u);
  h.io->ioctl_netdevs = {"sim0", "sim1"};
  h.poller->PollOnce();
  EXPECT_EQ(log.With("transceiver via ioctl").size(), 3u);
}

TEST(TransceiverPoller, NetlinkReadsNeitherLogNorLosePages) {
  LogCapture log;
  Harness h;
  h.poller->PollOnce();
  const auto state = h.poller->Latest();
  for (const auto& [netdev, reading] : state->modules) {
    EXPECT_EQ(reading.access.method, ModuleAccessMethod::kNetlink) << netdev;
    EXPECT_TRUE(reading.access.unread_pages.empty()) << netdev;
  }
  EXPECT_TRUE(log.With("transceiver via ioctl").empty());
}

TEST(TransceiverPoller, FailedReadCountsItsReasonAndLeavesNoStaleValues) {
  Harness h;
  h.poller->PollOnce();
  ASSERT_TRUE(h.poller->Latest()->modules.contains("sim0"));
  h.io->failures["sim0"] = EIO;  // mlx5: no module plugged, or the MCIA access failed
  h.poller->PollOnce();
  auto state = h.poller->Latest();
  EXPECT_FALSE(state->modules.contains("sim0"));
  EXPECT_TRUE(state->modules.contains("sim1"));
  EXPECT_EQ(state->errors.at("other"), 1u);
  EXPECT_EQ(state->reads, 6u);
  h.io->failures["sim0"] = EPERM;
  h.poller->PollOnce();
  EXPECT_EQ(h.poller->Latest()->errors.at("permission"), 1u);
  EXPECT_EQ(h.poller->Latest()->errors.at("other"), 1u);  // totals since start
}

// Observe mode has no CAP_NET_ADMIN: every module read is refused. The operator gets one line
// naming the fix and a gauge an alert reads, not a log line per netdev per round.
TEST(TransceiverPoller, PermissionRefusalIsFlaggedAndLoggedOncePerTransition) {
  LogCapture log;
  Harness h;
  h.poller->PollOnce();
  EXPECT_FALSE(h.poller->Latest()->permission_denied);
  h.io->failures["sim0"] = EPERM;
  h.io->failures["sim1"] = EACCES;
  for (int round = 0; round < 3; ++round) {
    h.poller->PollOnce();
    EXPECT_TRUE(h.poller->Latest()->permission_denied);
  }
  auto warned = log.With("transceiver reads refused for permission");
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_EQ(warned[0]["level"], "warning");
  EXPECT_EQ(warned[0]["needs"], "CAP_NET_ADMIN");
  EXPECT_NE(warned[0]["fix"].find("optics.conf"), std::string::npos);
  EXPECT_NE(warned[0]["fix"].find("--transceiver.interval=0"), std::string::npos);

  // Another failure reason is not a permission problem: the flag follows the last round only.
  h.io->failures = {{"sim0", EIO}};
  h.poller->PollOnce();
  EXPECT_FALSE(h.poller->Latest()->permission_denied);
  EXPECT_EQ(log.With("transceiver reads permitted").size(), 1u);
  h.io->failures = {{"sim1", EPERM}};
  h.poller->PollOnce();
  EXPECT_TRUE(h.poller->Latest()->permission_denied);
  EXPECT_EQ(log.With("transceiver reads refused for permission").size(), 2u);
}

TEST(TransceiverPoller, NetdevThatLeftTheSelectionIsDroppedAtTheNextRound) {
  Harness h;
  h.poller->PollOnce();
  auto before = h.poller->Latest();
  h.netdevs = {"sim1"};
  h.poller->PollOnce();
  EXPECT_FALSE(h.poller->Latest()->modules.contains("sim0"));
  EXPECT_TRUE(before->modules.contains("sim0"));  // a published state never changes
}

TEST(TransceiverPoller, ValuesChangeOnlyWithTheNextRound) {
  Harness h;
  h.poller->PollOnce();
  const double before = *h.poller->Latest()->modules.at("sim0").module.temperature_celsius;
  // SFF-8636 lower page bytes 22-23: temperature in 1/256 °C; 0x5000 = 80 °C.
  h.io->modules["sim0"].lower[22] = 0x50;
  h.io->modules["sim0"].lower[23] = 0x00;
  EXPECT_EQ(*h.poller->Latest()->modules.at("sim0").module.temperature_celsius, before);
  h.poller->PollOnce();
  EXPECT_EQ(*h.poller->Latest()->modules.at("sim0").module.temperature_celsius, 80.0);
}

TEST(TransceiverPoller, ThreadPollsAtItsIntervalAndStops) {
  Harness h({.interval = std::chrono::milliseconds(20)});
  h.poller->Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    auto state = h.poller->Latest();
    if (state && state->reads >= 9) break;  // three rounds of three netdevs
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  h.poller->Stop();
  ASSERT_NE(h.poller->Latest(), nullptr);
  EXPECT_GE(h.poller->Latest()->reads, 9u);
  const uint64_t after_stop = h.poller->Latest()->reads;
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(h.poller->Latest()->reads, after_stop);  // no round after Stop()
}

// A module read that hangs (a firmware command that does not come back) until released.
class BlockingIo : public ModuleEepromIo {
 public:
  explicit BlockingIo(ModulePages pages) : pages_(std::move(pages)) {}
  Result<std::vector<uint8_t>> ReadHalfPage(const std::string&, ModulePageAddress a) override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return released_; });
    if (!a.upper) return pages_.lower;
    auto page = pages_.upper.find(a.page);
    if (page == pages_.upper.end()) return MakeError(EINVAL, "no such page");
    return page->second;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  ModulePages pages_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

// The sampler publishes at its own period while a module read hangs on the poller thread, and
// the module shows in the snapshots once the read returns: the poller is not in the sampler's path.
TEST(TransceiverPoller, HangingModuleReadDoesNotDelayTheSampler) {
  auto inventory = std::make_unique<testing::FakeInventory>();
  inventory->inventory.devices.push_back(testing::MakeDevice("sim0", 2));
  auto ethtool = std::make_unique<testing::FakeEthtool>();
  ethtool->SetNames("sim0", {"rx_prio3_pause"});
  SamplerSources sources;
  sources.inventory = std::move(inventory);
  sources.ethtool = std::move(ethtool);
  sources.selected_by_default = [](const Device&) { return true; };
  SamplerOptions options;
  options.period = std::chrono::milliseconds(10);
  Sampler sampler(std::move(options), std::move(sources));

  auto blocking = std::make_unique<BlockingIo>(Fixture("qsfp28_sr4.pages"));
  BlockingIo* io = blocking.get();
  TransceiverPoller poller({.interval = std::chrono::seconds(60)}, std::move(blocking), [&] {
    (void)sampler.WaitForSequence(1, std::chrono::steady_clock::now() + std::chrono::seconds(10));
    std::vector<std::string> names;
    // Held for the loop: `sampler.Latest()->devices` as the range would free the snapshot the
    // loop reads as soon as the sampler publishes the next one (TSan caught it).
    const std::shared_ptr<const Snapshot> latest = sampler.Latest();
    if (latest) {
      for (const DeviceSnapshot& d : latest->devices) names.push_back(d.device->name);
    }
    return names;
  });
  sampler.SetAttachHook([&](Snapshot& draft) { draft.transceivers = poller.Latest(); });
  struct ReleaseOnExit {  // a failed assertion must not leave the poller thread hanging
    BlockingIo* io;
    ~ReleaseOnExit() { io->Release(); }
  } release_on_exit{io};
  sampler.Start();
  poller.Start();  // its first read hangs

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  ASSERT_TRUE(sampler.WaitForSequence(20, deadline)) << "the sampler stalled behind the read";
  EXPECT_EQ(sampler.Latest()->transceivers, nullptr);  // no round finished yet

  io->Release();
  bool attached = false;
  for (uint64_t seq = sampler.Latest()->sequence + 1; !attached; ++seq) {
    ASSERT_TRUE(sampler.WaitForSequence(seq, deadline)) << "no snapshot with the module";
    const auto latest = sampler.Latest();
    attached = latest->transceivers && latest->transceivers->modules.contains("sim0");
  }
  poller.Stop();
  sampler.Stop();
}

}  // namespace
}  // namespace roceqos
