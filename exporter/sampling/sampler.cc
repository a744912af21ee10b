#include "exporter/sampling/sampler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

#include "base/log_event.h"
#include "base/thread_name.h"
#include "exporter/core/error_reason.h"
#include "exporter/sampling/source_call.h"

namespace roceqos {
namespace {

using std::chrono::nanoseconds;

nanoseconds MaxPeriod(const SamplerOptions& options) {
  return options.max_period.count() > 0 ? options.max_period
                                        : options.period * kDefaultMaxPeriodFactor;
}

}  // namespace

Sampler::Sampler(SamplerOptions options, SamplerSources sources, Clock clock)
    : options_(std::move(options)),
      sources_(std::move(sources)),
      clock_(clock ? std::move(clock) : Clock(SteadyNow)),
      selector_(sources_.selected_by_default, options_.device_include, options_.device_exclude),
      ethtool_mappings_(sources_.map_ethtool_names, options_.raw_include),
      controller_(options_.period, options_.budget, MaxPeriod(options_)),
      scheduler_(
          {options_.period, options_.idle_period, options_.duty_cycle, MaxPeriod(options_)}) {
  if (sources_.ethtool) ethtool_.emplace(*sources_.ethtool);
  sources_status_[std::string(kSourceDiscovery)] = {};
  sources_status_[std::string(kSourceEthtool)] = {};
  sources_status_[std::string(kSourceRdma)] = {};
}

Sampler::~Sampler() { Stop(); }

void Sampler::AddStage(std::unique_ptr<SampleStage> stage) { stages_.push_back(std::move(stage)); }

template <typename F>
auto Sampler::Timed(nanoseconds& accumulator, F&& call) {
  const nanoseconds start = clock_();
  auto result = call();
  accumulator += clock_() - start;
  return result;
}

void Sampler::CountError(std::string_view source, ErrorReason reason) {
  ++errors_[{std::string(source), reason}];
}

// An empty selection serves no device series at all, which looks like a healthy idle host: say it
// at start and again at most once per discovery interval while it lasts.
void Sampler::WarnIfNothingSelected(size_t candidates) {
  // On transition only: a node that has no RoCE device keeps it that way, and a line per
  // discovery interval for ever says nothing new; roce_exporter_selected_devices 0 stays.
  if (!selected_.empty()) {
    if (nothing_selected_) {
      LogEvent(spdlog::level::info, "devices selected", {{"selected", selected_.size()}});
    }
    nothing_selected_ = false;
    return;
  }
  if (nothing_selected_) return;
  nothing_selected_ = true;
  LogEvent(spdlog::level::warn, "no device selected",
           {{"include", options_.device_include_text.empty() ? "(default: Mellanox PFs, RDMA-bound "
                                                               "netdevs)"
                                                             : options_.device_include_text},
            {"exclude", options_.device_exclude_text},
            {"candidates", candidates}});
}

void Sampler::Discover(nanoseconds now) {
  last_discovery_ = now;
  discovered_once_ = true;
  discovery_requested_.store(false);
  if (!sources_.inventory) return;

  nanoseconds spent{};
  Result<Inventory> inventory = Timed(
      spent, [&] { return Guard<Inventory>([&] { return sources_.inventory->Discover(); }); });
  SourceStatus& status = sources_status_[std::string(kSourceDiscovery)];
  status.last_duration_seconds = Seconds(spent);
  if (!inventory.ok()) {
    // Keep sampling the devices found last time; a failed dump says nothing about them.
    const ErrorReason reason = ReasonOf(inventory.error());
    CountError(kSourceDiscovery, reason);
    status.available = reason != ErrorReason::kUnavailable;
    fault_log_.Fault("discovery", ReasonName(reason), inventory.error().message,
                     spdlog::level::err);
    return;
  }
  status.available = true;
  fault_log_.Ok("discovery");
  rdma_netlink_available_ = inventory->rdma_netlink_available;
  rdma_ports_stale_ = inventory->rdma_ports_stale_seconds.has_value();
  if (inventory->rdma_error) {
    // The netdevs are complete; only the RDMA port list is missing until the next discovery.
    const ErrorReason reason = ReasonOf(*inventory->rdma_error);
    CountError(kSourceRdma, reason);
    fault_log_.Fault("discovery.rdma", ReasonName(reason), inventory->rdma_error->message,
                     spdlog::level::err);
  } else {
    fault_log_.Ok("discovery.rdma");
  }
  const size_t candidates = inventory->devices.size();
  Select(std::move(inventory->devices));
  WarnIfNothingSelected(candidates);
  EnsureRdma();
}

void Sampler::Select(std::vector<Device> devices) {
  std::vector<std::shared_ptr<const Device>> next;
  for (Device& device : devices) {
    if (!selector_.Selected(device)) continue;
    // Keep the previous object while the device is unchanged so snapshots keep sharing it.
    auto old = std::find_if(selected_.begin(), selected_.end(),
                            [&](const auto& d) { return d->name == device.name; });
    if (old != selected_.end() && **old == device) {
      next.push_back(*old);
    } else {
      next.push_back(std::make_shared<const Device>(std::move(device)));
    }
  }
  std::sort(next.begin(), next.end(),
            [](const auto& a, const auto& b) { return a->name < b->name; });

  for (const auto& old : selected_) {
    auto now_there =
        std::find_if(next.begin(), next.end(), [&](const auto& d) { return d->name == old->name; });
    // A device re-created under the same name (new ifindex) may have another string set.
    if (now_there == next.end() || (*now_there)->ifindex != old->ifindex) {
      if (ethtool_) ethtool_->Forget(old->name);
      ethtool_mappings_.Forget(old->name);
      fault_log_.Forget("ethtool " + old->name);
      if (now_there == next.end())
        LogEvent(spdlog::level::info, "device left the selection", {{"netdev", old->name}});
    }
  }
  for (const auto& device : next) {
    auto was_there = std::find_if(selected_.begin(), selected_.end(),
                                  [&](const auto& d) { return d->name == device->name; });
    if (was_there == selected_.end()) {
      LogEvent(spdlog::level::info, "selected device",
               {{"netdev", device->name},
                {"driver", device->driver.empty() ? "unknown" : device->driver},
                {"role", DeviceRoleName(device->role)},
                {"rdma_ports", device->rdma_ports.size()}});
    }
  }
  selected_ = std::move(next);
  std::vector<std::string> names;
  names.reserve(selected_.size());
  for (const auto& device : selected_) names.push_back(device->name);
  scheduler_.Retain(names);
}

void Sampler::EnsureRdma() {
  if (rdma_ || !sources_.open_rdma) return;
  if (!rdma_netlink_available_) {
    // Discovery already said so (once per process).
    fault_log_.Fault("rdma", "unavailable",
                     "the kernel has no RDMA netlink; RDMA port counters are not exported",
                     spdlog::level::debug);
    return;
  }
  Result<std::unique_ptr<RdmaCollector>> opened =
      Guard<std::unique_ptr<RdmaCollector>>([&] { return sources_.open_rdma(); });
  if (!opened.ok()) {
    const ErrorReason reason = ReasonOf(opened.error());
    // A kernel without RDMA netlink is a property of the host, shown by the availability gauge;
    // anything else (EPERM, ...) is a failure worth counting.
    if (reason != ErrorReason::kUnavailable) CountError(kSourceRdma, reason);
    fault_log_.Fault(
        "rdma", ReasonName(reason),
        opened.error().message + "; RDMA port counters are not exported",
        reason == ErrorReason::kUnavailable ? spdlog::level::info : spdlog::level::warn);
    return;
  }
  rdma_ = std::move(opened.value());
  fault_log_.Ok("rdma");
}

void Sampler::SampleEthtool(DeviceSnapshot& out, bool& device_gone, nanoseconds& spent) {
  if (!ethtool_) return;
  const Device& device = *out.device;
  const std::string key = "ethtool " + device.name;
  const nanoseconds before = clock_();
  Result<CounterSet> sample = Timed(
      spent, [&] { return Guard<CounterSet>([&] { return ethtool_->Sample(device.name); }); });
  const nanoseconds read_at = before + (clock_() - before) / 2;
  if (!sample.ok()) {
    if (sample.error().NotSupported()) {
      // EOPNOTSUPP: the device has no statistics (absent, not failed).
      fault_log_.Fault(key, "not_supported", "no ethtool statistics", spdlog::level::debug);
      return;
    }
    const ErrorReason reason = ReasonOf(sample.error());
    CountError(kSourceEthtool, reason);
    if (reason == ErrorReason::kDeviceGone) {
      device_gone = true;
      discovery_requested_.store(true);
      LogEvent(spdlog::level::info, "device vanished",
               {{"netdev", device.name}, {"error", sample.error().message}});
      return;
    }
    fault_log_.Fault(key, ReasonName(reason), sample.error().message);
    return;
  }
  CounterSet& counters = sample.value();
  if (!counters.names || counters.names->size() != counters.values.size()) {
    CountError(kSourceEthtool, ErrorReason::kMalformed);
    fault_log_.Fault(
        key, "malformed",
        fmt::format("{} names for {} values", counters.names ? counters.names->size() : 0,
                    counters.values.size()));
    return;
  }
  fault_log_.Ok(key);
  out.ethtool = ethtool_mappings_.Sample(device.name, std::move(counters), read_at);
}

void Sampler::SampleRdma(DeviceSnapshot& out, std::vector<std::pair<std::string, uint32_t>>& seen,
                         nanoseconds& spent) {
  if (!rdma_) return;
  for (const RdmaPort& port : out.device->rdma_ports) {
    std::pair<std::string, uint32_t> id{port.device, port.port};
    // A LAG port is listed on the bond; never read (and export) one port twice per sample.
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
    seen.push_back(id);
    const std::string key = fmt::format("rdma {}/{}", port.device, port.port);
    Result<CounterSet> sample =
        Timed(spent, [&] { return Guard<CounterSet>([&] { return rdma_->ReadCounters(port); }); });
    if (!sample.ok()) {
      if (sample.error().NotSupported()) {
        fault_log_.Fault(key, "not_supported", "no hw counters", spdlog::level::debug);
        continue;
      }
      const ErrorReason reason = ReasonOf(sample.error());
      CountError(kSourceRdma, reason);
      if (reason == ErrorReason::kDeviceGone) discovery_requested_.store(true);
      fault_log_.Fault(key, ReasonName(reason), sample.error().message);
      continue;
    }
    CounterSet& counters = sample.value();
    if (!counters.names || counters.names->size() != counters.values.size()) {
      CountError(kSourceRdma, ErrorReason::kMalformed);
      fault_log_.Fault(key, "malformed", "hw counter names and values differ in number");
      continue;
    }
    fault_log_.Ok(key);
    out.rdma.push_back(RdmaPortSample{port, std::move(counters), clock_()});
  }
}

void Sampler::InvalidateEthtoolNames(std::span<const std::string> netdevs) {
  if (!ethtool_) return;
  for (const std::string& netdev : netdevs) ethtool_->Invalidate(netdev);
}

void Sampler::SampleOnce() {
  std::vector<std::string> stale_names;
  {
    std::lock_guard lock(mu_);
    stale_names.swap(stale_names_);
  }
  // The collector is not thread-safe: Wake() only queues, the sampler thread invalidates.
  InvalidateEthtoolNames(stale_names);
  TakeReadRequests();
  const nanoseconds now = clock_();
  if (!discovered_once_ || discovery_requested_.load() ||
      now - last_discovery_ >= options_.discovery_interval) {
    Discover(now);
  }

  auto snapshot = std::make_shared<Snapshot>();
  nanoseconds kernel_time = SampleDevices(*snapshot);
  nanoseconds local{};
  kernel_time += RunStages(now, *snapshot, local);
  scheduler_.EndWake(clock_());
  // The ports asked for by then were due in this sample, and read (or tried).
  if (requested_read_due_ && *requested_read_due_ <= now) requested_read_due_.reset();
  // The duty cycle counts device calls (statistics reads, DCB queries), not /proc/self.
  duty_.Record(now, kernel_time);
  kernel_time += local;
  RecordKernelTime(kernel_time);
  scheduler_.SetFastPeriod(controller_.effective());
  Publish(Finish(std::move(snapshot), kernel_time));
}

bool Sampler::WorkDue() {
  TakeReadRequests();
  const nanoseconds now = clock_();
  if (!discovered_once_ || discovery_requested_.load() || scheduler_.AnyDue(now)) return true;
  if (requested_read_due_ && now >= *requested_read_due_) return true;
  return stage_sample_due_ && now >= *stage_sample_due_;
}

void Sampler::TakeReadRequests() {
  std::vector<std::pair<std::string, nanoseconds>> requests;
  {
    std::lock_guard lock(mu_);
    requests.swap(read_requests_);
  }
  for (const auto& request : requests) {
    const std::string& netdev = request.first;
    const bool selected = std::any_of(selected_.begin(), selected_.end(),
                                      [&](const auto& device) { return device->name == netdev; });
    if (!selected) continue;
    scheduler_.Urgent(netdev, request.second);
    if (!requested_read_due_ || request.second < *requested_read_due_) {
      requested_read_due_ = request.second;
    }
  }
}

namespace {

// Per-priority traffic below this is background (neighbour discovery, LLDP), not a busy port.
constexpr double kBusyPacketsPerSecond = 1000;

// Whether the port carries traffic that matters for the storm detector between two reads of the
// same string set: any pause counter moved, or a priority's packets at kBusyPacketsPerSecond. A
// first read, a new string set, or a port without pause and per-priority counters (a veth,
// Soft-RoCE's netdev: nothing to judge by, and no firmware behind its reads) counts as moving.
bool Moved(const DeviceSnapshot* before, const std::optional<EthtoolSample>& now) {
  if (!before || !before->ethtool || !now || !now->mapped) return true;
  const EthtoolSample& old = *before->ethtool;
  if (old.counters.names != now->counters.names) return true;
  const double seconds = std::chrono::duration<double>(now->read_at - old.read_at).count();
  bool judged = false;
  for (const MappedCounter& c : *now->mapped) {
    const uint64_t delta =
        now->counters.values[c.source_index] - old.counters.values[c.source_index];
    switch (c.counter) {
      case PortCounter::kPauseFrames:
      case PortCounter::kPauseDurationMicros:
      case PortCounter::kGlobalPauseFrames:
      case PortCounter::kGlobalPauseDurationMicros:
      case PortCounter::kPauseStormWarningEvents:
      case PortCounter::kPauseStormErrorEvents:
        if (delta != 0) return true;
        judged = true;
        break;
      case PortCounter::kPrioPackets:
        if (static_cast<double>(delta) >= kBusyPacketsPerSecond * seconds) return true;
        judged = true;
        break;
      default:
        break;
    }
  }
  return !judged;
}

// Whether any RDMA counter of the port changed (CNPs, ECN marks, retransmissions): RoCE traffic
// that keeps the port in the fast class even when its ethtool counters barely move.
bool RdmaMoved(const std::vector<RdmaPortSample>& before, const std::vector<RdmaPortSample>& now) {
  if (before.size() != now.size()) return true;
  for (size_t i = 0; i < now.size(); ++i) {
    if (before[i].port != now[i].port || before[i].counters.values != now[i].counters.values) {
      return true;
    }
  }
  return false;
}

}  // namespace

void Sampler::SampleDevice(const std::shared_ptr<const Device>& device,
                           const DeviceSnapshot* previous, Snapshot& snapshot,
                           nanoseconds& ethtool_spent, nanoseconds& rdma_spent,
                           std::vector<std::pair<std::string, uint32_t>>& seen_ports) {
  DeviceSnapshot out;
  out.device = device;
  const nanoseconds now = clock_();
  // Not due: the same read as before (same values, same read time: no new interval).
  if (previous && !scheduler_.EthtoolDue(device->name, now)) {
    out.ethtool = previous->ethtool;
    out.rdma = previous->rdma;
    snapshot.devices.push_back(std::move(out));
    return;
  }
  bool gone = false;
  const nanoseconds ethtool_before = ethtool_spent;
  SampleEthtool(out, gone, ethtool_spent);
  if (gone) return;  // no series for a device that no longer exists
  // A failed read counts as idle: it is retried with the idle ports, not at every wake.
  const bool moved = out.ethtool && Moved(previous, out.ethtool);
  if (!previous || scheduler_.RdmaDue(device->name, now, moved)) {
    const nanoseconds rdma_before = rdma_spent;
    SampleRdma(out, seen_ports, rdma_spent);
    scheduler_.RecordRdma(device->name, now,
                          (rdma_spent - rdma_before) / std::max<size_t>(out.rdma.size(), 1),
                          previous && RdmaMoved(previous->rdma, out.rdma));
  } else {
    out.rdma = previous->rdma;
  }
  scheduler_.RecordEthtool(device->name, now, ethtool_spent - ethtool_before, moved);
  snapshot.devices.push_back(std::move(out));
}

nanoseconds Sampler::SampleDevices(Snapshot& snapshot) {
  snapshot.devices.reserve(selected_.size());
  nanoseconds ethtool_spent{};
  nanoseconds rdma_spent{};
  std::vector<std::pair<std::string, uint32_t>> seen_ports;
  const std::shared_ptr<const Snapshot> last = latest_.Load();
  for (const auto& device : selected_) {
    const DeviceSnapshot* previous = nullptr;
    if (last) {
      // The same Device object: a re-created or changed device is read afresh.
      auto it = std::find_if(last->devices.begin(), last->devices.end(),
                             [&](const DeviceSnapshot& d) { return d.device == device; });
      if (it != last->devices.end()) previous = &*it;
    }
    SampleDevice(device, previous, snapshot, ethtool_spent, rdma_spent, seen_ports);
  }
  sources_status_[std::string(kSourceEthtool)] = {Seconds(ethtool_spent), true};
  sources_status_[std::string(kSourceRdma)] = {Seconds(rdma_spent),
                                               rdma_ != nullptr && rdma_netlink_available_};
  return ethtool_spent + rdma_spent;
}

nanoseconds Sampler::RunStages(nanoseconds now, Snapshot& snapshot, nanoseconds& local) {
  const std::shared_ptr<const Snapshot> previous = latest_.Load();
  stage_sample_due_.reset();
  nanoseconds kernel_time{};
  for (const auto& stage : stages_) {
    StageContext ctx;
    ctx.previous = previous.get();
    ctx.now = now;
    const nanoseconds start = clock_();
    try {
      stage->Run(ctx, snapshot);
    } catch (const std::exception& e) {
      ctx.errors.push_back(ErrorReason::kException);
      fault_log_.Fault(std::string(stage->Source()), "exception", e.what(), spdlog::level::err);
    }
    sources_status_[std::string(stage->Source())] = {Seconds(clock_() - start), ctx.available};
    kernel_time += ctx.kernel_time;
    local += ctx.local_kernel_time;
    for (const auto& [netdev, at] : ctx.read_again) scheduler_.Urgent(netdev, at);
    for (const ErrorReason reason : ctx.errors) CountError(stage->Source(), reason);
    InvalidateEthtoolNames(ctx.invalidate_ethtool_names);
    if (ctx.sample_again_at && (!stage_sample_due_ || *ctx.sample_again_at < *stage_sample_due_)) {
      stage_sample_due_ = ctx.sample_again_at;
    }
  }
  return kernel_time;
}

void Sampler::RecordKernelTime(nanoseconds kernel_time) {
  if (controller_.Record(kernel_time)) {
    fault_log_.Fault("sampler", "budget_overrun",
                     fmt::format("kernel calls took {:.3f}s, over {:.0f}% of the period; sample "
                                 "period lengthened to {:.3f}s",
                                 Seconds(kernel_time), controller_.budget() * 100,
                                 Seconds(controller_.effective())));
  } else if (controller_.effective() == controller_.configured()) {
    fault_log_.Ok("sampler");
  }
}

std::shared_ptr<const Snapshot> Sampler::Finish(std::shared_ptr<Snapshot> snapshot,
                                                nanoseconds kernel_time) {
  snapshot->sequence = ++sequence_;
  snapshot->taken_at = std::chrono::system_clock::now();
  snapshot->taken_at_steady = std::chrono::steady_clock::now();
  snapshot->sources = sources_status_;
  snapshot->errors = errors_;
  snapshot->sampler = SamplerStatus{
      .configured_period_seconds = Seconds(controller_.configured()),
      .effective_period_seconds = Seconds(controller_.effective()),
      .budget_ratio = controller_.budget(),
      .last_kernel_seconds = Seconds(kernel_time),
      .overruns = controller_.overruns(),
      .samples = sequence_,
      .kernel_duty_cycle = duty_.Ratio(clock_()),
      .rdma_ports_stale = rdma_ports_stale_,
  };
  if (attach_hook_) attach_hook_(*snapshot);
  return snapshot;
}

void Sampler::Publish(const std::shared_ptr<const Snapshot>& snapshot) {
  const uint64_t sequence = snapshot->sequence;
  latest_.Store(snapshot);
  if (publish_hook_) publish_hook_(*snapshot);
  {
    std::lock_guard lock(mu_);
    published_sequence_ = sequence;
  }
  cv_.notify_all();
}

bool Sampler::WaitForSequence(uint64_t sequence,
                              std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mu_);
  return cv_.wait_until(lock, deadline, [&] { return published_sequence_ >= sequence || stop_; }) &&
         published_sequence_ >= sequence;
}

void Sampler::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = NamedThread("roceqos-sampler", [this] { Run(); });
}

void Sampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void Sampler::RequestRead(const std::string& netdev, nanoseconds at) {
  {
    std::lock_guard lock(mu_);
    read_requests_.emplace_back(netdev, at);
  }
  cv_.notify_all();
}

void Sampler::Wake(bool discovery, std::span<const std::string> stale_names) {
  if (discovery) discovery_requested_.store(true);
  {
    std::lock_guard lock(mu_);
    wake_ = true;
    stale_names_.insert(stale_names_.end(), stale_names.begin(), stale_names.end());
  }
  cv_.notify_all();
}

std::chrono::steady_clock::time_point Sampler::NextWake(
    std::chrono::steady_clock::time_point started, std::chrono::steady_clock::time_point& next) {
  const auto period = controller_.effective();
  // A wake-up never starts a sample sooner than this after the previous one.
  const auto gap = std::clamp<nanoseconds>(period / 10, std::chrono::milliseconds(10),
                                           std::chrono::milliseconds(100));
  const auto now = std::chrono::steady_clock::now();
  const nanoseconds clock_now = clock_();
  // The sampler's clock and the steady clock differ in epoch only (tests inject the former).
  auto at = [&](nanoseconds due) {
    return std::max(now + std::max<nanoseconds>(due - clock_now, {}), started + gap);
  };
  if (scheduler_.enabled()) {
    // One wake for every port of a class (and for a follow-up), none in between.
    next = now + kDefaultMaxPeriodFactor * period;
    if (auto due = scheduler_.NextDue()) next = at(*due);
  } else {
    next += period;
    if (next < now) next = now;  // late: start at once, but never burst to catch up
  }
  // A stage asked for an earlier sample; the cadence restarts from it.
  if (stage_sample_due_) next = std::min(next, at(*stage_sample_due_));
  if (requested_read_due_) next = std::min(next, at(*requested_read_due_));
  return started + gap;
}

void Sampler::Run() {
  using Steady = std::chrono::steady_clock;
  auto next = Steady::now();
  bool work = true;  // the first sample, and one after a change notification
  for (;;) {
    const auto started = Steady::now();
    try {
      if (work || WorkDue()) SampleOnce();
    } catch (const std::exception& e) {
      // Thread boundary: a sample that throws is lost, the sampler is not.
      CountError(kSourceSampler, ErrorReason::kException);
      fault_log_.Fault("sampler thread", "exception", e.what(), spdlog::level::err);
    }
    work = false;
    const auto earliest = NextWake(started, next);
    std::unique_lock lock(mu_);
    if (cv_.wait_until(lock, next, [&] { return stop_ || wake_ || !read_requests_.empty(); }) &&
        !stop_) {
      // Woken by a change notification: sample now, but not sooner after the last sample than
      // the gap, and keep the cadence from there. The sample reads every port. Woken by a read
      // request: after the same gap, the schedule decides what is due (WorkDue takes it).
      const bool notified = wake_;
      wake_ = false;
      if (cv_.wait_until(lock, earliest, [&] { return stop_; })) return;
      if (notified) {
        next = std::max(Steady::now(), earliest);
        scheduler_.ReadAllNext();
        work = true;
      }
      continue;
    }
    if (stop_) return;
  }
}

}  // namespace roceqos
