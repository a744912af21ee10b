#pragma once

// The sampler: one thread that reads every selected device once per period and publishes an
// immutable Snapshot. Discovery runs at a slower cadence (and on demand, e.g. when a device
// vanished mid-sample). Each sample costs one ETHTOOL_GSTATS per selected netdev and one
// RDMA_NLDEV_CMD_STAT_GET per bound RDMA port; the time spent in those calls is held within a
// share of the period by PeriodController.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/published.h"
#include "collectors/ethtool.h"
#include "exporter/core/error_reason.h"
#include "exporter/core/fault_log.h"
#include "exporter/core/sampling_limits.h"
#include "exporter/core/snapshot.h"
#include "exporter/sampling/device_selector.h"
#include "exporter/sampling/ethtool_mapping.h"
#include "exporter/sampling/period_controller.h"
#include "exporter/sampling/port_scheduler.h"
#include "exporter/sampling/sources.h"

namespace roceqos {

struct SamplerOptions {
  std::chrono::nanoseconds period = std::chrono::milliseconds(250);
  double budget = 0.5;  // share of the effective period kernel calls may take, (0, 1]
  /// Cap of the backed-off period; zero means kDefaultMaxPeriodFactor × period.
  std::chrono::nanoseconds max_period{0};
  std::chrono::nanoseconds discovery_interval = std::chrono::seconds(5);
  /// Floor of an idle port's period (--sampler.idle-period, exporter/sampling/port_scheduler.h);
  /// zero: no per-port schedule, every sample reads every port (the daemon's flag is on).
  std::chrono::nanoseconds idle_period{0};
  /// Kernel duty cycle the per-port schedule keeps to (--sampler.duty-cycle).
  double duty_cycle = 0.02;
  std::optional<std::regex> device_include;
  std::optional<std::regex> device_exclude;
  std::optional<std::regex> raw_include;  // opt-in raw ethtool names
  // The include/exclude patterns as given, for the "no device selected" log line.
  std::string device_include_text, device_exclude_text;
};

/// What a stage may report back to the sampler about its run.
struct StageContext {
  const Snapshot* previous = nullptr;  // the last published snapshot; null before the first
  std::chrono::nanoseconds now{};      // monotonic time of this sample
  /// Time the stage spent in kernel calls; it counts against the sampler budget.
  std::chrono::nanoseconds kernel_time{};
  /// Kernel time that touches no device and takes no RTNL (/proc/self): it counts against the
  /// budget but not in the kernel duty cycle.
  std::chrono::nanoseconds local_kernel_time{};
  /// One entry per failure, by reason; counted under the stage's source.
  std::vector<ErrorReason> errors;
  bool available = true;  // roce_exporter_source_available{source=Source()}
  /// Netdevs whose ethtool names must be re-read at their next sample (e.g. PFC was changed:
  /// mlx5 reorders its string set without always changing the count).
  std::vector<std::string> invalidate_ethtool_names;
  /// Monotonic time (the sampler's clock) by which the stage wants the next sample, e.g. when a
  /// suspected PFC storm can be confirmed. Honoured when earlier than the next periodic sample,
  /// never sooner than the wake-up gap (see Wake); the cadence then restarts from that sample.
  std::optional<std::chrono::nanoseconds> sample_again_at;
  /// The ports behind sample_again_at and when each is wanted: with the per-port schedule, the
  /// sample then reads those ports (and no other that is not due).
  std::vector<std::pair<std::string, std::chrono::nanoseconds>> read_again;
};

/// Extension point for work that belongs to every sample but not to the counter sources: the
/// QoS engine's DCB poll + drift (fills DeviceSnapshot::qos), the derivation's windowed rates and
/// storm state machine (fills DeviceSnapshot::derived). Stages run on the sampler
/// thread, in the order added, after the counters of the sample were read and before it is
/// published; their wall time is roce_exporter_collect_duration_seconds{source=Source()}.
class SampleStage {
 public:
  virtual ~SampleStage() = default;
  virtual std::string_view Source() const = 0;
  virtual void Run(StageContext& ctx, Snapshot& draft) = 0;
};

class Sampler {
 public:
  /// Monotonic time source; tests inject one that fake sources advance.
  using Clock = std::function<std::chrono::nanoseconds()>;

  Sampler(SamplerOptions options, SamplerSources sources, Clock clock = {});
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  /// Adds a stage; call before Start().
  void AddStage(std::unique_ptr<SampleStage> stage);

  /// Called on the sampler thread after each publish (systemd READY=1/WATCHDOG=1). Set before
  /// Start(); must be quick and must not throw.
  void SetPublishHook(std::function<void(const Snapshot&)> hook) {
    publish_hook_ = std::move(hook);
  }

  /// Called on the sampler thread on every draft just before it is published, to attach state
  /// produced elsewhere (the transceiver poller's latest, a pointer copy). Set before Start();
  /// must be quick, must not touch the kernel and must not throw.
  void SetAttachHook(std::function<void(Snapshot&)> hook) { attach_hook_ = std::move(hook); }

  /// Takes one sample on the calling thread and publishes it: it reads the ports the per-port
  /// schedule says are due (every port without one) and carries the others' last reads forward.
  /// Not to be called concurrently with itself or with a running thread; the thread loop, tests
  /// and benchmarks use it.
  void SampleOnce();

  /// Whether a sample now would do anything: a port due, a discovery or a stage's request
  /// pending. The thread loop skips a wake without work (no snapshot is published).
  bool WorkDue();

  /// Starts the sampling thread (first sample immediately); Stop() joins it. Idempotent.
  void Start();
  void Stop();

  /// Makes the next sample re-run discovery. Thread-safe.
  void RequestDiscovery() { discovery_requested_.store(true); }

  /// Takes the next sample now instead of at the end of the period (a change notification
  /// arrived), optionally with a discovery. Thread-safe. A wake-up never starts a sample sooner
  /// than a tenth of the effective period (clamped to 10..100 ms) after the previous one, so a
  /// notification storm cannot turn the sampler into a busy loop. The ethtool names of
  /// `stale_names` (netdevs whose DCB changed) are re-read before their next values.
  void Wake(bool discovery, std::span<const std::string> stale_names = {});

  /// Asks for a read of `netdev`'s counters at `at` (the sampler's clock; now when earlier), even
  /// when the per-port schedule would carry its last read forward until its class is due. Only
  /// that port is read then (with any other that is due), not every port as after Wake(). A
  /// netdev that is not selected is ignored. Thread-safe; the sample still keeps the wake-up gap
  /// after the previous one (see Wake). The storm guard's witness uses it to get fresh evidence
  /// of a device before a write (exporter/app/storm_witness.h).
  void RequestRead(const std::string& netdev, std::chrono::nanoseconds at);
  void RequestRead(const std::string& netdev) { RequestRead(netdev, std::chrono::nanoseconds{}); }

  /// The sampler's clock (the times of reads, DeviceSample and DerivedDeviceSignals). Thread-safe
  /// when the clock is (the steady clock, the tests' fakes).
  std::chrono::nanoseconds Now() const { return clock_(); }

  /// The latest published snapshot; null before the first. Thread-safe, never blocks on sampling.
  std::shared_ptr<const Snapshot> Latest() const { return latest_.Load(); }

  /// Waits until a snapshot with sequence >= `sequence` is published or `deadline` passes.
  bool WaitForSequence(uint64_t sequence, std::chrono::steady_clock::time_point deadline) const;

 private:
  void Discover(std::chrono::nanoseconds now);
  /// Keeps the selected devices of a discovery, forgetting the state of those gone or re-created.
  void Select(std::vector<Device> devices);
  /// Reads ethtool and RDMA counters of every selected device that is due, carrying the others'
  /// last reads forward; returns the kernel time.
  std::chrono::nanoseconds SampleDevices(Snapshot& snapshot);
  /// Reads one device, or carries `previous` forward when it is not due.
  void SampleDevice(const std::shared_ptr<const Device>& device, const DeviceSnapshot* previous,
                    Snapshot& snapshot, std::chrono::nanoseconds& ethtool_spent,
                    std::chrono::nanoseconds& rdma_spent,
                    std::vector<std::pair<std::string, uint32_t>>& seen_ports);
  /// Runs the stages on the draft; returns their kernel time, and adds the part that touches no
  /// device (StageContext::local_kernel_time) to `local`.
  std::chrono::nanoseconds RunStages(std::chrono::nanoseconds now, Snapshot& snapshot,
                                     std::chrono::nanoseconds& local);
  /// The steady-clock time of the next wake after a sample that started at `started`.
  std::chrono::steady_clock::time_point NextWake(std::chrono::steady_clock::time_point started,
                                                 std::chrono::steady_clock::time_point& next);
  /// Feeds the period controller and logs a budget overrun.
  void RecordKernelTime(std::chrono::nanoseconds kernel_time);
  /// Stamps sequence, time and status onto the finished draft.
  std::shared_ptr<const Snapshot> Finish(std::shared_ptr<Snapshot> snapshot,
                                         std::chrono::nanoseconds kernel_time);
  /// Warns when the selection becomes empty, and says so (info) when it is not empty again.
  void WarnIfNothingSelected(size_t candidates);
  void EnsureRdma();
  void SampleEthtool(DeviceSnapshot& out, bool& device_gone, std::chrono::nanoseconds& spent);
  void SampleRdma(DeviceSnapshot& out, std::vector<std::pair<std::string, uint32_t>>& seen,
                  std::chrono::nanoseconds& spent);
  void CountError(std::string_view source, ErrorReason reason);
  void InvalidateEthtoolNames(std::span<const std::string> netdevs);
  void Publish(const std::shared_ptr<const Snapshot>& snapshot);
  /// Hands the reads asked for by RequestRead to the scheduler (sampler thread).
  void TakeReadRequests();
  void Run();

  template <typename F>
  auto Timed(std::chrono::nanoseconds& accumulator, F&& call);

  SamplerOptions options_;
  SamplerSources sources_;
  Clock clock_;
  DeviceSelector selector_;
  std::optional<EthtoolCollector> ethtool_;  // over sources_.ethtool, when there is one
  EthtoolMappings ethtool_mappings_;         // per netdev, once per string-set generation
  PeriodController controller_;
  PortScheduler scheduler_;
  DutyCycle duty_;
  FaultLog fault_log_;
  std::vector<std::unique_ptr<SampleStage>> stages_;
  std::function<void(const Snapshot&)> publish_hook_;
  std::function<void(Snapshot&)> attach_hook_;

  // Sampler-thread state.
  std::vector<std::shared_ptr<const Device>> selected_;  // sorted by name
  bool discovered_once_ = false;
  std::chrono::nanoseconds last_discovery_{};
  bool nothing_selected_ = false;  // the last discovery selected nothing (and it was logged)
  std::unique_ptr<RdmaCollector> rdma_;
  bool rdma_netlink_available_ = true;
  bool rdma_ports_stale_ = false;  // the last discovery published its kept RDMA port list
  std::map<CollectErrorKey, uint64_t> errors_;
  std::map<std::string, SourceStatus> sources_status_;
  uint64_t sequence_ = 0;
  std::optional<std::chrono::nanoseconds> stage_sample_due_;  // earliest sample_again_at
  // The earliest read asked for by RequestRead that no sample has reached yet.
  std::optional<std::chrono::nanoseconds> requested_read_due_;

  std::atomic<bool> discovery_requested_{false};
  Published<Snapshot> latest_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // signalled on publish and on stop
  bool stop_ = false;
  bool wake_ = false;
  std::vector<std::string> stale_names_;  // from Wake(), applied at the start of the next sample
  // From RequestRead(): (netdev, when), handed to the scheduler before the next sample.
  std::vector<std::pair<std::string, std::chrono::nanoseconds>> read_requests_;
  uint64_t published_sequence_ = 0;
  std::thread thread_;
};

/// Source names used in self-metrics.
inline constexpr std::string_view kSourceDiscovery = "discovery";
inline constexpr std::string_view kSourceEthtool = "ethtool";
inline constexpr std::string_view kSourceRdma = "rdma";
inline constexpr std::string_view kSourceSampler = "sampler";

}  // namespace roceqos
