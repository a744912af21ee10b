#include "exporter/qos/qos_engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/log_event.h"
#include "base/thread_name.h"
#include "collectors/netlink/socket.h"
#include "exporter/qos/policy_loader.h"

namespace roceqos {
namespace {

// One error per failed source of a device, for roce_exporter_collect_errors_total.
void CollectErrors(const ObservedQos& o, std::vector<Error>& errors) {
  auto add = [&](const auto& observed) {
    if (observed.failed()) errors.push_back(Error{observed.errnum, observed.error});
  };
  add(o.dcb);
  add(o.tcp_ecn);
  add(o.pfc_storm_timeout_ms);
  add(o.dcqcn.cnp_dscp);
  add(o.dcqcn.cnp_802p_prio);
  for (int p = 0; p < kNumPriorities; ++p) {
    add(o.dcqcn.np_enabled[p]);
    add(o.dcqcn.rp_enabled[p]);
  }
  for (const auto& port : o.roce_tos) {
    add(port.tos.mofed_tclass);
    add(port.tos.configfs_tos);
  }
}

// A device an apply would touch: drift in a field remediation writes.
bool WantsRemediation(const DeviceDrift& drift) {
  return std::any_of(drift.fields.begin(), drift.fields.end(),
                     [](const FieldVerdict& v) { return v.Drifted() && Remediable(v.field); });
}

// A port's class is logged when it is first seen and whenever checked or unconfigured changes.
void LogPortClass(const std::string& netdev, const std::optional<RocePortClass>& before,
                  const std::optional<RocePortClass>& after) {
  if (!after || (before && before->checked == after->checked)) return;
  if (!before && after->checked) return;  // the usual case needs no line
  LogEvent(after->checked && before ? spdlog::level::warn : spdlog::level::info,
           after->checked ? "qos port is a RoCE port now: its drift counts"
                          : "qos port unconfigured: not a RoCE port, its differences page nobody",
           {{"netdev", netdev},
            {"reason", RocePortReasonName(after->reason)},
            {"detail", after->detail}});
}

DeviceContext MakeContext(const QosEngine::DeviceInput& input, bool driver_ready) {
  const Device& device = *input.device;
  DeviceContext context;
  context.netdev = device.name;
  context.identity = DeviceIdentity(device);
  context.role = device.role;
  context.oper_up = device.oper_state == OperState::kUp;
  for (const auto& port : device.rdma_ports) context.rdma_devices.push_back(port.device);
  context.driver_ready = driver_ready;
  context.storm = input.storm;
  return context;
}

RemediationWorker::Options WorkerOptions(const QosEngineOptions& options) {
  RemediationWorker::Options worker;
  worker.remediation = options.remediation;
  worker.deadline = options.apply_deadline;
  worker.state_file = options.remediation_state_file;
  worker.facts = options.write_facts;
  if (options.remediation_clock) worker.now = options.remediation_clock;
  return worker;
}

}  // namespace

std::chrono::milliseconds DefaultApplyDeadline(const RemediationOptions& options) {
  return options.apply_budget + 2 * netlink::SocketOptions{}.receive_timeout;
}

QosEngine::QosEngine(QosEngineOptions options, std::shared_ptr<const PolicySet> policy,
                     std::unique_ptr<QosReader> reader, QosIo remediation)
    : options_(std::move(options)), reader_(std::move(reader)), policy_(std::move(policy)) {
  if (options_.apply_deadline.count() <= 0)
    options_.apply_deadline = DefaultApplyDeadline(options_.remediation);
  if (options_.remediation.mode != RemediationMode::kOff) {
    worker_ = std::make_unique<RemediationWorker>(
        WorkerOptions(options_), std::move(remediation.reader), std::move(remediation.writer));
  }
  global_.enforce_held_elsewhere = options_.enforce_held_elsewhere;
  global_.policy_source = policy_->source;
  global_.policy_reload_time = SystemClock::now();
  global_.remediation_mode = options_.remediation.mode;
}

QosEngine::~QosEngine() { Stop(); }

void QosEngine::Stop() {
  if (worker_) worker_->Stop();
}

bool QosEngine::WaitForRemediationIdle(SteadyClock::time_point deadline) const {
  return !worker_ || worker_->WaitIdle(deadline);
}

QosEngine::SteadyClock::time_point QosEngine::RemediationNow() const {
  return options_.remediation_clock ? options_.remediation_clock() : SteadyClock::now();
}

std::shared_ptr<const PolicySet> QosEngine::policy() const {
  std::lock_guard lock(mu_);
  return policy_;
}

Result<void> QosEngine::ReloadPolicy() {
  // SIGHUP and POST /-/reload run on different threads: without the ticket, a read that started
  // first but finished last would replace the newer policy with the older file.
  uint64_t ticket = 0;
  {
    std::lock_guard lock(mu_);
    ticket = ++reloads_started_;
  }
  auto loaded =
      options_.policy_loader ? options_.policy_loader() : LoadPolicy(options_.config_path);
  std::lock_guard lock(mu_);
  if (ticket < reload_installed_) {
    LogEvent(spdlog::level::info, "policy reload superseded by a later one, not installed",
             {{"in_force", policy_->source}});
    if (!loaded) return loaded.error();
    return {};
  }
  reload_installed_ = ticket;
  global_.policy_reload_time = SystemClock::now();
  if (!loaded) {
    global_.policy_reload_success = false;
    global_.policy_reload_error = loaded.error().message;
    LogEvent(spdlog::level::err, "policy reload rejected, keeping the last good policy",
             {{"kept", policy_->source}, {"error", loaded.error().message}});
    return loaded.error();
  }
  policy_ = std::move(*loaded);
  ++policy_generation_;
  global_.policy_source = policy_->source;
  global_.policy_reload_success = true;
  global_.policy_reload_error.clear();
  LogEvent(spdlog::level::info, "policy reloaded",
           {{"source", policy_->source}, {"device_rules", policy_->rules.size()}});
  return {};
}

QosEngine::ChangeResponse QosEngine::OnChange(const ChangeEvent& event) {
  std::lock_guard lock(mu_);
  switch (event.kind) {
    case ChangeEvent::Kind::kResync:
      resync_ = true;
      ++global_.monitor_resyncs.at(static_cast<size_t>(event.resync_reason));
      return {.sample = true, .discovery = true, .dcb_changed = {}};
    case ChangeEvent::Kind::kLinkRemoved:
      ++global_.change_notifications;
      return {.sample = true, .discovery = true, .dcb_changed = {}};
    case ChangeEvent::Kind::kLink:
      ++global_.change_notifications;
      // A known netdev only changed state (a pfc_en change flaps the link): its DCB state did
      // not change without a DCB notification, and the periodic discovery refreshes oper state
      // and MTU. Waking the sampler for it would only delay the DCB notification that follows.
      if (known_devices_.contains(event.netdev)) return {};
      return {.sample = true, .discovery = true, .dcb_changed = {}};  // a new or renamed netdev
    case ChangeEvent::Kind::kDcb: {
      ++global_.change_notifications;
      auto [it, inserted] = pending_.try_emplace(event.netdev, event.received);
      if (!inserted) it->second = std::min(it->second, event.received);
      return {.sample = true, .discovery = false, .dcb_changed = {event.netdev}};
    }
  }
  return {};
}

void QosEngine::SetMonitorRunning(bool running) {
  std::lock_guard lock(mu_);
  global_.monitor_running = running;
}

bool QosEngine::DriverReady() const {
  // Where the MOFED/DOCA container manages the driver, its directory exists and the sentinel
  // appears once the driver is loaded; elsewhere there is nothing to wait for.
  const std::filesystem::path sentinel(options_.driver_ready_path);
  std::error_code ec;
  if (!std::filesystem::is_directory(sentinel.parent_path(), ec)) return true;
  return std::filesystem::exists(sentinel, ec);
}

QosEngine::Output QosEngine::Update(const std::vector<DeviceInput>& devices) {
  const auto start = SteadyClock::now();
  std::shared_ptr<const PolicySet> policy;
  uint64_t generation;
  std::map<std::string, SteadyClock::time_point> pending;
  bool resync;
  {
    std::lock_guard lock(mu_);
    policy = policy_;
    generation = policy_generation_;
    pending.swap(pending_);
    resync = resync_;
    resync_ = false;
  }

  Output out;
  // tcp_ecn is host-wide: read at most once per pass, only when some device polls.
  std::optional<Observed<int>> tcp_ecn;
  std::vector<SteadyClock::time_point> served;
  std::vector<std::string> names;
  // Each device's policy is resolved once per pass; every step below reads that resolution.
  std::vector<PolicyResolution> resolved;
  for (const auto& input : devices) {
    const std::string& name = input.device->name;
    names.push_back(name);
    std::optional<SteadyClock::time_point> event;
    if (auto it = pending.find(name); it != pending.end()) event = it->second;
    const PollScope poll = DuePoll(input, start, resync);
    if (poll != PollScope::kNone && !tcp_ecn) {
      const auto t = SteadyClock::now();
      tcp_ecn = reader_->ReadTcpEcn();
      out.kernel_time += SteadyClock::now() - t;
    }
    resolved.push_back(policy->ResolveChecked(*input.device));
    out.devices.push_back(UpdateDevice(input, *policy, resolved.back(), generation, event, poll,
                                       tcp_ecn.value_or(Observed<int>::Absent()), out));
    if (event) served.push_back(*event);
  }
  tracker_.Retain(names);
  if (worker_) Remediate(devices, policy, resolved, out);
  std::set<std::string> known(names.begin(), names.end());

  // Detection latency: notification received -> this snapshot ready (it is published right
  // after the stages run).
  const auto ready = SteadyClock::now();
  std::lock_guard lock(mu_);
  known_devices_ = std::move(known);
  if (tcp_ecn) global_.tcp_ecn = *tcp_ecn;
  for (const auto& received : served) {
    double seconds = std::chrono::duration<double>(ready - received).count();
    global_.last_detection_latency_seconds = seconds;
    global_.max_detection_latency_seconds =
        std::max(global_.max_detection_latency_seconds, seconds);
  }
  out.global = std::make_shared<const QosGlobalState>(global_);
  return out;
}

QosEngine::PollScope QosEngine::DuePoll(const DeviceInput& input, SteadyClock::time_point start,
                                        bool resync) const {
  const auto& prev = input.previous;
  if (resync || !prev) return PollScope::kAll;
  if (start - prev->polled_at < options_.poll_interval) return PollScope::kNone;
  return start - prev->dcqcn_polled_at >= options_.dcqcn_poll_interval ? PollScope::kAll
                                                                       : PollScope::kAllButDcqcn;
}

std::shared_ptr<const QosDeviceState> QosEngine::UpdateDevice(
    const DeviceInput& input, const PolicySet& policy, const PolicyResolution& resolution,
    uint64_t generation, std::optional<SteadyClock::time_point> event, PollScope poll,
    const Observed<int>& tcp_ecn, Output& out) {
  const Device& device = *input.device;
  const auto& prev = input.previous;
  const auto now = SteadyClock::now();
  const bool policy_changed = !prev || prev->policy_generation != generation;
  auto state = std::make_shared<QosDeviceState>();
  if (poll == PollScope::kNone && !event && !policy_changed) {
    // Nothing to read, but RoCE traffic may have started on an unconfigured port: checked now.
    std::optional<RocePortClass> port = ClassifyPort(input, policy, resolution, prev->observed);
    if (port == prev->roce_port) return prev;
    *state = *prev;
    state->roce_port = std::move(port);
    LogPortClass(device.name, prev->roce_port, state->roce_port);
    Evaluate(device, resolution, *state);
    return state;
  }

  const auto t = SteadyClock::now();
  if (poll == PollScope::kAll) {
    state->observed = ReadObservedQos(*reader_, device, tcp_ecn);
    state->polled_at = now;
    state->dcqcn_polled_at = now;
    state->observed_at = now;
  } else if (poll == PollScope::kAllButDcqcn) {
    state->observed = ReadObservedQosKeepingDcqcn(*reader_, device, tcp_ecn, prev->observed);
    state->polled_at = now;
    state->dcqcn_polled_at = prev->dcqcn_polled_at;
    state->observed_at = now;
  } else {
    state->observed = event ? RereadDcb(*reader_, device, prev->observed) : prev->observed;
    state->polled_at = prev->polled_at;
    state->dcqcn_polled_at = prev->dcqcn_polled_at;
    state->observed_at = event ? now : prev->observed_at;
  }
  out.kernel_time += SteadyClock::now() - t;
  CollectErrors(state->observed, out.errors);

  state->policy_generation = generation;
  state->roce_port = ClassifyPort(input, policy, resolution, state->observed);
  LogPortClass(device.name, prev ? prev->roce_port : std::nullopt, state->roce_port);
  Evaluate(device, resolution, *state);
  return state;
}

std::optional<RocePortClass> QosEngine::ClassifyPort(const DeviceInput& input,
                                                     const PolicySet& policy,
                                                     const PolicyResolution& resolution,
                                                     const ObservedQos& observed) {
  const Device& device = *input.device;
  if (!resolution.resolved || resolution.rule == "none") return std::nullopt;
  RocePortInput in{resolution.rule, policy.roce_ports, &observed, {}, {}};
  const std::optional<std::string> configured = ConfiguredEvidence(observed);
  // The counters are looked at only where they decide something: a port the defaults check in
  // auto mode and that is not configured.
  if (resolution.rule == "default" && policy.roce_ports == RocePorts::kAuto &&
      !(configured && !configured->empty())) {
    const std::string identity = DeviceIdentity(device);
    const RoceTraffic traffic = RoceTrafficOf(input.ethtool, input.rdma);
    roce_ports_.NoteTraffic(identity, traffic);
    in.traffic = roce_ports_.WithLastKnown(identity, traffic);
    in.remembered = roce_ports_.Remembered(identity);
  }
  return ClassifyRocePort(in);
}

void QosEngine::Evaluate(const Device& device, const PolicyResolution& resolution,
                         QosDeviceState& state) {
  const QosPolicy& effective = *resolution.policy;
  state.policy_rule = std::string(resolution.rule);
  state.policy_hash = PolicyFingerprint(effective);
  state.desired_pfc = effective.pfc;
  state.drift = EvaluateDrift(effective, state.observed);
  state.state_hash = StateFingerprint(state.observed);
  if (state.roce_port) roce_ports_.Learn(DeviceIdentity(device), *state.roce_port, state.drift);
  // An unconfigured port's differences are not drift: its history neither counts nor logs them,
  // and once it is a RoCE port they count as entries into drift.
  const bool checked = !state.roce_port || state.roce_port->checked;
  const auto& history = tracker_.Record(device.name, checked ? state.drift : DeviceDrift{},
                                        state.state_hash, SystemClock::now());
  state.drift_events = history.drift_events;
  state.last_change = history.last_change;
}

void QosEngine::Remediate(const std::vector<DeviceInput>& devices,
                          const std::shared_ptr<const PolicySet>& policy,
                          const std::vector<PolicyResolution>& resolved, Output& out) {
  const bool stuck = ApplyStuck();
  const std::shared_ptr<const RemediationResults> results = worker_->Results();
  {
    std::lock_guard lock(mu_);
    global_.enforce_suspended_reason = results->suspended_reason;
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    // A device evaluated anew (read, or a new policy) is stepped by the next pass posted.
    if (out.devices[i] != devices[i].previous) owed_.insert(devices[i].device->name);
    out.devices[i] =
        ShowRemediation(*devices[i].device, resolved[i], out.devices[i], *results, stuck);
  }
  // A stuck pass gets no successor: the devices wait (owed) until it returns.
  if (!stuck) PostPass(devices, resolved, out, policy);
}

bool QosEngine::ApplyStuck() {
  const std::optional<RemediationWorker::Running> busy = worker_->Busy();
  const auto now = RemediationNow();
  const bool stuck = busy && now - busy->since >= options_.apply_deadline;
  if (stuck && !stuck_) {
    LogEvent(
        spdlog::level::err,
        "remediation: an apply is still running past its deadline (a kernel call does not "
        "return); no new pass until it does",
        {{"netdev", busy->netdev},
         {"elapsed_seconds", std::chrono::duration<double>(now - busy->since).count()},
         {"deadline_seconds", std::chrono::duration<double>(options_.apply_deadline).count()}});
  } else if (!stuck && stuck_) {
    LogEvent(spdlog::level::warn, "remediation: the stuck apply returned, passes resume",
             {{"netdev", stuck_->netdev},
              {"elapsed_seconds", std::chrono::duration<double>(now - stuck_->since).count()}});
  }
  std::lock_guard lock(mu_);
  if (stuck && !stuck_) ++global_.apply_stuck_total;
  global_.apply_stuck = stuck;
  stuck_ = stuck ? busy : std::nullopt;
  return stuck;
}

std::shared_ptr<const QosDeviceState> QosEngine::ShowRemediation(
    const Device& device, const PolicyResolution& resolution,
    const std::shared_ptr<const QosDeviceState>& state, const RemediationResults& results,
    bool stuck) {
  auto it = results.devices.find(device.name);
  const RemediationOutcome* outcome = it == results.devices.end() ? nullptr : &it->second;
  std::shared_ptr<QosDeviceState> copy;
  // The worker's read (after its writes, or before planning) is newer than the pass's: publish
  // it rather than what the writes replaced.
  if (outcome && outcome->read && outcome->read_at > state->observed_at) {
    copy = std::make_shared<QosDeviceState>(*state);
    AdoptRead(device, resolution, *outcome, *copy);
  }
  const QosDeviceState& current = copy ? *copy : *state;
  std::optional<RemediationState> shown;  // none until the worker first steps the device
  if (outcome) shown = outcome->state;
  if (stuck && WantsRemediation(current.drift)) shown = RemediationState::kBlockedApplyStuck;
  const std::map<std::pair<QosField, std::string>, uint64_t> none;
  const auto& counts = outcome ? outcome->counts : none;
  const bool interrupted = outcome && outcome->interrupted_apply;
  if (shown == current.remediation && counts == current.remediation_counts &&
      interrupted == current.interrupted_apply)
    return copy ? copy : state;
  if (!copy) copy = std::make_shared<QosDeviceState>(*state);
  copy->remediation = shown;
  copy->remediation_counts = counts;
  copy->interrupted_apply = interrupted;
  return copy;
}

void QosEngine::AdoptRead(const Device& device, const PolicyResolution& resolution,
                          const RemediationOutcome& outcome, QosDeviceState& state) {
  state.observed = *outcome.read;
  state.observed_at = outcome.read_at;
  Evaluate(device, resolution, state);
}

void QosEngine::PostPass(const std::vector<DeviceInput>& devices,
                         const std::vector<PolicyResolution>& resolved, const Output& out,
                         const std::shared_ptr<const PolicySet>& policy) {
  RemediationPass pass;
  std::optional<bool> driver_ready;  // a filesystem look: once per pass, only when needed
  for (size_t i = 0; i < devices.size(); ++i) {
    const Device& device = *devices[i].device;
    pass.present.emplace_back(device.name, DeviceIdentity(device));
    if (!owed_.contains(device.name)) continue;
    if (!driver_ready) driver_ready = DriverReady();
    RemediationItem item;
    const PolicyResolution& resolution = resolved[i];
    item.context = MakeContext(devices[i], *driver_ready);
    // A rule that could not be evaluated leaves the device's policy unknown: observe, never the
    // defaults (docs/remediation.md guard 1).
    item.context.policy_resolved = resolution.resolved;
    item.device = devices[i].device;
    // Aliases the policy set: the effective policy lives as long as the worker holds the item.
    item.policy = std::shared_ptr<const QosPolicy>(policy, resolution.policy);
    // An unconfigured port is not a RoCE port: nothing of the defaults is written to it.
    static const auto kNothingWritten = std::make_shared<const QosPolicy>();
    if (out.devices[i]->roce_port && !out.devices[i]->roce_port->checked)
      item.policy = kNothingWritten;
    item.state = out.devices[i];
    pass.items.push_back(std::move(item));
  }
  owed_.clear();
  // Nothing to step and the same devices: the worker has nothing to learn.
  if (pass.items.empty() && pass.present == posted_present_) return;
  posted_present_ = pass.present;
  worker_->Post(std::move(pass));
}

QosMonitorThread::QosMonitorThread(QosEngine* engine, Wake wake)
    : engine_(engine), wake_(std::move(wake)) {}

QosMonitorThread::~QosMonitorThread() { Stop(); }

bool QosMonitorThread::Start() {
  auto monitor = ChangeMonitor::Open();
  if (!monitor) {
    LogEvent(spdlog::level::warn, "QoS change monitor unavailable, polling only",
             {{"error", monitor.error().message}});
    engine_->SetMonitorRunning(false);
    return false;
  }
  monitor_ = std::move(*monitor);
  engine_->SetMonitorRunning(true);
  thread_ = NamedThread("roceqos-qos-mon", [this] { Run(); });
  return true;
}

void QosMonitorThread::Stop() {
  stop_ = true;
  if (monitor_) monitor_->Interrupt();
  if (thread_.joinable()) thread_.join();
}

void QosMonitorThread::Run() {
  while (!stop_) {
    try {
      auto events = monitor_->Wait(std::chrono::seconds(1));
      if (!events) {
        LogEvent(spdlog::level::warn, "QoS change monitor read failed",
                 {{"error", events.error().message}});
        continue;
      }
      if (events->empty()) continue;
      QosEngine::ChangeResponse response;
      for (const auto& e : *events) {
        QosEngine::ChangeResponse r = engine_->OnChange(e);
        response.sample |= r.sample;
        response.discovery |= r.discovery;
        for (std::string& netdev : r.dcb_changed) {
          if (std::find(response.dcb_changed.begin(), response.dcb_changed.end(), netdev) ==
              response.dcb_changed.end()) {
            response.dcb_changed.push_back(std::move(netdev));
          }
        }
      }
      // The sampler limits how soon after its previous sample a wake-up starts the next one, so
      // a notification storm cannot turn it into a busy loop.
      if (response.sample) wake_(response);
    } catch (const std::exception& e) {
      // Thread boundary: polling still catches every change if the monitor misbehaves.
      LogEvent(spdlog::level::err, "QoS change monitor failed", {{"error", e.what()}});
    }
  }
}

}  // namespace roceqos
