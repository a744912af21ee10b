#include "exporter/qos/qos_engine.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "collectors/log_event.h"

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

}  // namespace

Result<std::shared_ptr<const PolicySet>> LoadPolicy(const std::string& config_path,
                                                    const std::function<void()>& after_read) {
  if (config_path.empty()) return std::make_shared<const PolicySet>(DefaultPolicy());
  // A file being rewritten in place (an editor, `cat > policy.yaml`) can be read half-written;
  // a prefix of a valid policy may itself be valid. Refuse a file that changed while it was
  // read: the last good policy stays, and the writer's own reload (or the next) gets it whole.
  struct stat before {
  }, after{};
  const bool stat_before = ::stat(config_path.c_str(), &before) == 0;
  auto set = LoadPolicyFile(config_path);
  if (!set) return set.error();
  if (after_read) after_read();
  if (stat_before &&
      (::stat(config_path.c_str(), &after) != 0 || after.st_ino != before.st_ino ||
       after.st_size != before.st_size || after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
       after.st_mtim.tv_nsec != before.st_mtim.tv_nsec))
    return MakeError(EAGAIN, fmt::format("{}: changed while it was being read (write the new "
                                         "policy to a temporary file and rename it into place)",
                                         config_path));
  return std::make_shared<const PolicySet>(std::move(*set));
}

QosEngine::QosEngine(QosEngineOptions options, std::shared_ptr<const PolicySet> policy,
                     std::unique_ptr<QosReader> reader, std::unique_ptr<QosWriter> writer)
    : options_(std::move(options)),
      reader_(std::move(reader)),
      writer_(std::move(writer)),
      store_(options_.remediation_state_file.empty()
                 ? nullptr
                 : std::make_unique<RemediationStore>(options_.remediation_state_file)),
      remediator_(options_.remediation, writer_.get(), store_.get()),
      policy_(std::move(policy)) {
  global_.enforce_held_elsewhere = options_.enforce_held_elsewhere;
  global_.policy_source = policy_->source;
  global_.policy_reload_time = SystemClock::now();
  global_.remediation_mode = options_.remediation.mode;
}

std::shared_ptr<const PolicySet> QosEngine::policy() const {
  std::lock_guard lock(mu_);
  return policy_;
}

Result<void> QosEngine::ReloadPolicy() {
  auto loaded = LoadPolicy(options_.config_path);
  std::lock_guard lock(mu_);
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
  remediator_.BeginPass();

  Output out;
  // tcp_ecn is host-wide: read at most once per pass, only when some device polls.
  std::optional<Observed<int>> tcp_ecn;
  std::optional<bool> driver_ready;
  std::vector<SteadyClock::time_point> served;
  std::vector<std::string> names, identities;
  for (const auto& input : devices) {
    const std::string& name = input.device->name;
    names.push_back(name);
    identities.push_back(DeviceIdentity(*input.device));
    std::optional<SteadyClock::time_point> event;
    if (auto it = pending.find(name); it != pending.end()) event = it->second;
    const bool poll_due =
        resync || !input.previous || start - input.previous->polled_at >= options_.poll_interval;
    if (poll_due && !tcp_ecn) {
      const auto t = SteadyClock::now();
      tcp_ecn = reader_->ReadTcpEcn();
      out.kernel_time += SteadyClock::now() - t;
    }
    if (options_.remediation.mode != RemediationMode::kOff && !driver_ready)
      driver_ready = DriverReady();
    out.devices.push_back(UpdateDevice(input, *policy, generation, event, poll_due,
                                       tcp_ecn.value_or(Observed<int>::Absent()),
                                       driver_ready.value_or(true), out));
    if (event) served.push_back(*event);
  }
  tracker_.Retain(names);
  remediator_.Retain(identities);
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

std::shared_ptr<const QosDeviceState> QosEngine::UpdateDevice(
    const DeviceInput& input, const PolicySet& policy, uint64_t generation,
    std::optional<SteadyClock::time_point> event, bool poll_due, const Observed<int>& tcp_ecn,
    bool driver_ready, Output& out) {
  const Device& device = *input.device;
  const auto& prev = input.previous;
  const auto now = SteadyClock::now();
  const bool policy_changed = !prev || prev->policy_generation != generation;
  if (!poll_due && !event && !policy_changed) return prev;

  auto state = std::make_shared<QosDeviceState>();
  const auto t = SteadyClock::now();
  if (poll_due) {
    state->observed = ReadObservedQos(*reader_, device, tcp_ecn);
    state->polled_at = now;
  } else if (event) {
    state->observed = RereadDcb(*reader_, device, prev->observed);
    state->polled_at = prev->polled_at;
  } else {
    state->observed = prev->observed;
    state->polled_at = prev->polled_at;
  }
  out.kernel_time += SteadyClock::now() - t;
  CollectErrors(state->observed, out.errors);

  auto [effective, rule] = policy.Resolve(device);
  state->policy_rule = std::string(rule);
  state->policy_hash = PolicyFingerprint(*effective);
  state->policy_generation = generation;
  state->drift = EvaluateDrift(*effective, state->observed);

  if (options_.remediation.mode != RemediationMode::kOff)
    Remediate(input, *effective, driver_ready, now, *state, out);

  state->state_hash = StateFingerprint(state->observed);
  const auto& history =
      tracker_.Record(device.name, state->drift, state->state_hash, SystemClock::now());
  state->drift_events = history.drift_events;
  state->last_change = history.last_change;
  return state;
}

void QosEngine::Remediate(const DeviceInput& input, const QosPolicy& effective, bool driver_ready,
                          SteadyClock::time_point now, QosDeviceState& state, Output& out) {
  const Device& device = *input.device;
  DeviceContext context;
  context.netdev = device.name;
  context.role = device.role;
  context.oper_up = device.oper_state == "up";
  for (const auto& port : device.rdma_ports) context.rdma_devices.push_back(port.device);
  context.driver_ready = driver_ready;
  context.identity = DeviceIdentity(device);
  context.storm = input.storm;
  auto reread = [&] { return ReadObservedQos(*reader_, device, reader_->ReadTcpEcn()); };
  std::optional<ObservedQos> after;
  const auto w = SteadyClock::now();  // reads and writes of remediation
  RemediationState r = remediator_.Step(context, effective, state.observed, state.drift, now,
                                        reread, nullptr, &after);
  out.kernel_time += SteadyClock::now() - w;
  if (r == RemediationState::kActed) {
    // The drift happened even though it is fixed now: count it.
    tracker_.Record(device.name, state.drift, StateFingerprint(state.observed), SystemClock::now());
  }
  if (after) {
    // What remediation read last (before planning, after writing) is the newest state.
    state.observed = std::move(*after);
    state.drift = EvaluateDrift(effective, state.observed);
  }
  state.remediation = r;
  if (const auto* status = remediator_.Status(context.identity)) {
    state.remediation_counts = status->counts;
    state.interrupted_apply = status->interrupted_apply;
  }
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
  thread_ = std::thread([this] { Run(); });
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
