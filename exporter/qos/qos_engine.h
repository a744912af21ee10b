#pragma once

// The QoS engine: keeps the policy, turns change notifications into immediate re-reads, polls
// every device at --qos.poll-interval as the safety net, evaluates drift, hands remediation to its
// worker thread, and produces the QoS part of each snapshot. Update() runs on the sampler thread
// (as a sample stage) and never waits for the worker; OnChange()/ReloadPolicy() may be called
// from any thread.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collectors/device.h"
#include "collectors/monitor.h"
#include "exporter/core/qos_state.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/policy.h"
#include "exporter/qos/qos_io.h"
#include "exporter/qos/remediate.h"
#include "exporter/qos/remediation_worker.h"
#include "exporter/qos/roce_port.h"

namespace roceqos {

struct QosEngineOptions {
  std::string config_path;                                           // empty: embedded default
  std::chrono::nanoseconds poll_interval = std::chrono::seconds(5);  // --qos.poll-interval
  /// --qos.dcqcn-poll-interval: the MOFED ecn/ tree is read at the first poll past this since its
  /// last read (each file is a firmware command on mlx5; nothing notifies its changes).
  std::chrono::nanoseconds dcqcn_poll_interval = std::chrono::seconds(30);
  RemediationOptions remediation;
  /// The MOFED/DOCA driver-ready sentinel; remediation waits for it when its directory exists.
  std::string driver_ready_path = "/run/mellanox/drivers/.driver-ready";
  /// Enforce mode: where attempts, back-off, give-up and applies in progress survive a restart
  /// (remediate_store.h). Empty: kept in memory only (tests, dry-run).
  std::string remediation_state_file;
  /// Another instance holds the enforce lock: this one observes (exported as a metric).
  bool enforce_held_elsewhere = false;
  /// A remediation pass still running this long after it started is stuck: no new pass is posted
  /// and drifted devices show blocked_apply_stuck until it returns. Zero: DefaultApplyDeadline.
  std::chrono::milliseconds apply_deadline{0};
  /// Measures apply_deadline (tests inject a clock). Empty: the steady clock.
  std::function<std::chrono::steady_clock::time_point()> remediation_clock;
  /// Where the remediation worker's write gate takes its facts at each write (the sampler's storm
  /// evidence, the device's identity in sysfs, the enforcer lock). A missing one refuses writes.
  WriteFacts write_facts;
  /// Tests: replaces LoadPolicy(config_path) (policy_loader.h) in ReloadPolicy.
  std::function<Result<std::shared_ptr<const PolicySet>>()> policy_loader;
};

/// The longest a healthy pass takes: writes stop starting once apply_budget is spent, then the
/// write under way and the verification read each end within the netlink receive timeout (2 s):
/// apply_budget + 2 × 2 s (7 s with the defaults). docs/remediation.md derives it.
std::chrono::milliseconds DefaultApplyDeadline(const RemediationOptions& options);

/// The reader and writer a remediation worker uses on its own thread.
struct QosIo {
  std::unique_ptr<QosReader> reader;
  std::unique_ptr<QosWriter> writer;
};

class QosEngine {
 public:
  using SteadyClock = std::chrono::steady_clock;
  using SystemClock = std::chrono::system_clock;

  /// `reader` serves the sampler thread. `remediation` is the worker's own pair: used, and a
  /// worker thread started, only when remediation is dry-run or enforce.
  QosEngine(QosEngineOptions options, std::shared_ptr<const PolicySet> policy,
            std::unique_ptr<QosReader> reader, QosIo remediation = {});
  ~QosEngine();

  /// Re-reads --config. A policy that does not validate is rejected as a whole: the last good one
  /// stays in force, the failure is logged and exported. Thread-safe; of reloads that overlap, the
  /// one that started last decides (an older read that finishes later is dropped).
  Result<void> ReloadPolicy();

  /// What a notification asks of the sampler: a sample now (a DCB change to re-read, a device
  /// added or removed) and whether it needs a discovery first.
  struct ChangeResponse {
    bool sample = false;
    bool discovery = false;
    /// Netdevs whose DCB configuration changed: a PFC change can rewrite mlx5's ethtool string
    /// set without changing its size, so their names must be re-read before the next values.
    std::vector<std::string> dcb_changed;
  };
  /// A notification from the change monitor. Thread-safe. DCB events are re-read at the next
  /// Update; link events of devices selected at the last Update need nothing (their DCB state
  /// notifies on its own); other link events ask for a discovery.
  ChangeResponse OnChange(const ChangeEvent& event);
  void SetMonitorRunning(bool running);

  struct DeviceInput {
    std::shared_ptr<const Device> device;
    std::shared_ptr<const QosDeviceState> previous;  // from the last snapshot; null if new
    StormGuard storm = StormGuard::kUnknown;         // from the storm state machine
    /// This sample's counters (the draft's; valid during Update): whether RoCE traffic moves on
    /// the device decides whether the defaults check it (roce_port.h). Null: not read.
    const CounterSet* ethtool = nullptr;
    std::vector<const CounterSet*> rdma{};
  };
  struct Output {
    std::vector<std::shared_ptr<const QosDeviceState>> devices;  // parallel to the input
    std::shared_ptr<const QosGlobalState> global;
    std::chrono::nanoseconds kernel_time{};  // time spent reading and writing
    std::vector<Error> errors;               // one per failed source read
  };

  /// One pass on the sampler thread: re-reads the devices that changed or are due, reuses the
  /// previous state of the others (same pointer: nothing copied).
  Output Update(const std::vector<DeviceInput>& devices);

  RemediationMode remediation_mode() const { return options_.remediation.mode; }
  std::shared_ptr<const PolicySet> policy() const;

  /// Joins the remediation worker: waits for the device step under way (nothing further starts).
  /// Call after the sampler stopped; Update must not run afterwards. Idempotent.
  void Stop();

  /// Tests: waits until the worker has no pass pending or running (true), or `deadline` passes.
  bool WaitForRemediationIdle(SteadyClock::time_point deadline) const;

 private:
  /// What a pass polls of a device (a notified DCB change is re-read either way).
  enum class PollScope : uint8_t { kNone, kAllButDcqcn, kAll };
  PollScope DuePoll(const DeviceInput& input, SteadyClock::time_point start, bool resync) const;
  /// `resolution` is the device's policy, resolved once for the pass (Update).
  std::shared_ptr<const QosDeviceState> UpdateDevice(
      const DeviceInput& input, const PolicySet& policy, const PolicyResolution& resolution,
      uint64_t generation, std::optional<SteadyClock::time_point> event, PollScope poll,
      const Observed<int>& tcp_ecn, Output& out);
  /// Brings the worker's newest outcome for the device (and its read, when newer) into the state.
  std::shared_ptr<const QosDeviceState> ShowRemediation(
      const Device& device, const PolicyResolution& resolution,
      const std::shared_ptr<const QosDeviceState>& state, const RemediationResults& results,
      bool stuck);
  /// Takes the worker's read as the device's observation: drift and history follow it.
  void AdoptRead(const Device& device, const PolicyResolution& resolution,
                 const RemediationOutcome& outcome, QosDeviceState& state);
  /// Whether the defaults check the device (roce_port.h), from its observation, its counters and
  /// what this process saw of it; nullopt when its policy checks no field.
  std::optional<RocePortClass> ClassifyPort(const DeviceInput& input, const PolicySet& policy,
                                            const PolicyResolution& resolution,
                                            const ObservedQos& observed);
  /// Drift, fingerprints and history of a state whose observation and class are set.
  void Evaluate(const Device& device, const PolicyResolution& resolution, QosDeviceState& state);
  /// Whether a pass has run past the deadline; logs the start and the end of that, once each.
  bool ApplyStuck();
  /// The sampler's half of remediation: shows the worker's outcomes, posts the next pass.
  /// `resolved` is parallel to `devices`: each device's policy as Update resolved it.
  void Remediate(const std::vector<DeviceInput>& devices,
                 const std::shared_ptr<const PolicySet>& policy,
                 const std::vector<PolicyResolution>& resolved, Output& out);
  void PostPass(const std::vector<DeviceInput>& devices,
                const std::vector<PolicyResolution>& resolved, const Output& out,
                const std::shared_ptr<const PolicySet>& policy);
  SteadyClock::time_point RemediationNow() const;
  bool DriverReady() const;

  QosEngineOptions options_;
  std::unique_ptr<QosReader> reader_;
  std::unique_ptr<RemediationWorker> worker_;  // null when remediation is off
  DriftTracker tracker_;                       // sampler thread only
  RocePortMemory roce_ports_;                  // sampler thread only
  // Sampler thread only: devices evaluated since the last pass was posted (none is posted while
  // one is stuck), the device set that pass named, and the stuck pass being reported.
  std::set<std::string> owed_;
  std::vector<std::pair<std::string, std::string>> posted_present_;
  std::optional<RemediationWorker::Running> stuck_;

  mutable std::mutex mu_;  // guards everything below
  std::shared_ptr<const PolicySet> policy_;
  uint64_t policy_generation_ = 1;
  uint64_t reloads_started_ = 0;   // tickets, taken before a reload reads the file
  uint64_t reload_installed_ = 0;  // the ticket whose outcome is in force
  QosGlobalState global_;
  std::map<std::string, SteadyClock::time_point> pending_;  // netdev -> first unserved event
  std::set<std::string> known_devices_;                     // selected at the last Update
  bool resync_ = false;
};

/// The change-monitor thread: waits on RTNLGRP_DCB/RTNLGRP_LINK and hands each event to the
/// engine, then, when the engine asks for it, calls `wake(discovery_wanted)` so the sampler takes
/// a sample at once instead of at the end of its period (the < 100 ms detection path).
class QosMonitorThread {
 public:
  using Wake = std::function<void(const QosEngine::ChangeResponse&)>;
  QosMonitorThread(QosEngine* engine, Wake wake);
  ~QosMonitorThread();
  /// False (and logged) when the monitor socket cannot be opened: polling still works.
  bool Start();
  void Stop();

 private:
  void Run();
  QosEngine* engine_;
  Wake wake_;
  std::unique_ptr<ChangeMonitor> monitor_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace roceqos
