#pragma once

// The remediation worker: the one thread that runs Remediator passes. An apply reads the device,
// saves the state file (two fsyncs), writes and reads back; on the sampler thread, which also
// feeds the systemd watchdog, a slow driver or a hung netlink call would starve the watchdog. The
// sampler posts the inputs of a pass and returns at once; the worker publishes what each device's
// step decided. docs/remediation.md "The watchdog cannot kill an apply".

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/published.h"
#include "collectors/device.h"
#include "exporter/core/qos_state.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/policy.h"
#include "exporter/qos/qos_io.h"
#include "exporter/qos/remediate.h"
#include "exporter/qos/remediate_store.h"

namespace roceqos {

/// One device's step as the sampler saw it. Everything is immutable or a copy: the worker keeps it
/// while the sampler moves on.
struct RemediationItem {
  DeviceContext context;
  std::shared_ptr<const Device> device;         // re-read through the worker's own reader
  std::shared_ptr<const QosPolicy> policy;      // the effective policy (keeps its PolicySet alive)
  std::shared_ptr<const QosDeviceState> state;  // the observation and drift just evaluated
};

struct RemediationPass {
  std::vector<RemediationItem> items;
  /// (netdev, identity) of every selected device: the others' outcomes are dropped, their
  /// remediation state is kept for RemediationOptions::ForgetAfter() (Remediator::Retain).
  std::vector<std::pair<std::string, std::string>> present;
};

/// What the last step of one device decided.
struct RemediationOutcome {
  RemediationState state = RemediationState::kInSync;
  std::map<std::pair<QosField, std::string>, uint64_t> counts;  // (field, result)
  bool interrupted_apply = false;
  /// The worker's last read of the device (enforce: before planning, after writing); null if it
  /// never read it. `read_at` is when that read started, on the steady clock.
  std::shared_ptr<const ObservedQos> read;
  std::chrono::steady_clock::time_point read_at{};
  uint64_t pass = 0;  // the pass that decided this (passes are numbered from 1 as they start)
};

struct RemediationResults {
  uint64_t passes_run = 0;
  std::map<std::string, RemediationOutcome> devices;  // by netdev
  std::string suspended_reason;                       // Remediator::suspended_reason()
};

class RemediationWorker {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  struct Options {
    RemediationOptions remediation;
    /// A pass that runs longer starts no further device; the rest waits for the next pass.
    std::chrono::nanoseconds deadline = std::chrono::seconds(7);
    std::string state_file;  // empty: remediation state kept in memory only
    Now now = &Clock::now;   // measures the deadline (tests inject a clock)
    /// The ledger's and the write gate's clock; the items' `now` must be on the same clock.
    Now remediator_now = &Clock::now;
    /// Where the write gate takes its facts (write_gate.h); a missing provider refuses writes.
    WriteFacts facts;
    /// Replaces the state file (the enforce simulation keeps the ledger in memory).
    LedgerStore* store = nullptr;
    /// False: no thread; RunPending() runs the pending pass on the caller's thread (the enforce
    /// simulation steps the worker deterministically).
    bool thread = true;
  };

  /// The reader and writer are this thread's own: netlink sockets are not shared across threads.
  RemediationWorker(Options options, std::unique_ptr<QosReader> reader,
                    std::unique_ptr<QosWriter> writer);
  ~RemediationWorker();
  RemediationWorker(const RemediationWorker&) = delete;
  RemediationWorker& operator=(const RemediationWorker&) = delete;

  /// Hands a pass to the worker and returns without waiting. A pass still waiting is replaced:
  /// the newer inputs win, and devices only the older pass had are kept (at most one pending pass,
  /// one entry per device).
  void Post(RemediationPass pass);

  struct Running {
    Clock::time_point since;  // on the injected clock
    std::string netdev;       // the device being stepped
  };
  /// The pass under way, if any. Thread-safe.
  std::optional<Running> Busy() const;

  /// The outcomes of every device stepped so far. Thread-safe, never blocks on a pass.
  std::shared_ptr<const RemediationResults> Results() const { return results_.Load(); }

  /// Without a thread (Options::thread false): runs the pending pass, if any, here. True when one
  /// ran.
  bool RunPending();

  /// Tests: waits until no pass is pending or running, or `deadline` passes.
  bool WaitIdle(Clock::time_point deadline) const;

  /// Starts no further device and joins the thread: waits for the step under way, at most the
  /// apply of one device. Idempotent.
  void Stop();

 private:
  void Run();
  /// Takes the pending pass and runs it; false when none was pending.
  bool TakeAndRun(std::unique_lock<std::mutex>& lock);
  void RunPass(RemediationPass pass, uint64_t number, Clock::time_point started);
  RemediationOutcome StepDevice(const RemediationItem& item, uint64_t number);
  /// Drops the state of devices no longer selected and publishes the outcomes.
  void Finish(const RemediationPass& pass);
  /// Puts the devices a pass had no time for back in front of the pending pass.
  void Requeue(RemediationPass skipped);
  bool Stopping() const;

  Options options_;
  std::unique_ptr<QosReader> reader_;
  std::unique_ptr<QosWriter> writer_;
  std::unique_ptr<RemediationStore> store_;
  Remediator remediator_;                               // worker thread only
  std::map<std::string, RemediationOutcome> outcomes_;  // worker thread only
  uint64_t passes_run_ = 0;                             // worker thread only
  Published<RemediationResults> results_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // a pass posted, a pass finished, stop
  std::optional<RemediationPass> pending_;
  std::optional<Running> running_;
  uint64_t passes_started_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace roceqos
