#include "exporter/qos/remediation_worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

#include "base/log_event.h"
#include "base/thread_name.h"

namespace roceqos {
namespace {

// The newer pass wins for every device it has; a device only the older one had keeps its step
// unless it is no longer selected. Never more than one entry per device.
RemediationPass Merge(RemediationPass older, RemediationPass newer) {
  auto in = [](const auto& list, auto pred) {
    return std::find_if(list.begin(), list.end(), pred) != list.end();
  };
  for (RemediationItem& item : older.items) {
    const std::string& netdev = item.context.netdev;
    const bool replaced =
        in(newer.items, [&](const RemediationItem& i) { return i.context.netdev == netdev; });
    const bool present = in(newer.present, [&](const auto& p) { return p.first == netdev; });
    if (!replaced && present) newer.items.push_back(std::move(item));
  }
  return newer;
}

}  // namespace

RemediationWorker::RemediationWorker(Options options, std::unique_ptr<QosReader> reader,
                                     std::unique_ptr<QosWriter> writer)
    : options_(std::move(options)),
      reader_(std::move(reader)),
      writer_(std::move(writer)),
      store_(options_.state_file.empty() ? nullptr
                                         : std::make_unique<RemediationStore>(options_.state_file)),
      remediator_(options_.remediation, writer_.get(), options_.facts,
                  options_.store != nullptr ? options_.store : store_.get(),
                  options_.remediator_now) {
  auto initial = std::make_shared<RemediationResults>();
  initial->suspended_reason = remediator_.suspended_reason();  // the state file, loaded above
  results_.Store(std::move(initial));
  if (options_.thread) thread_ = NamedThread("roceqos-enforce", [this] { Run(); });
}

RemediationWorker::~RemediationWorker() { Stop(); }

void RemediationWorker::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool RemediationWorker::Stopping() const {
  std::lock_guard lock(mu_);
  return stop_;
}

void RemediationWorker::Post(RemediationPass pass) {
  {
    std::lock_guard lock(mu_);
    pending_ = pending_ ? Merge(std::move(*pending_), std::move(pass)) : std::move(pass);
  }
  cv_.notify_all();
}

void RemediationWorker::Requeue(RemediationPass skipped) {
  std::lock_guard lock(mu_);
  pending_ = pending_ ? Merge(std::move(skipped), std::move(*pending_)) : std::move(skipped);
}

std::optional<RemediationWorker::Running> RemediationWorker::Busy() const {
  std::lock_guard lock(mu_);
  return running_;
}

bool RemediationWorker::WaitIdle(Clock::time_point deadline) const {
  std::unique_lock lock(mu_);
  return cv_.wait_until(lock, deadline, [&] { return stop_ || (!pending_ && !running_); });
}

void RemediationWorker::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || pending_; });
    if (stop_) break;
    TakeAndRun(lock);
  }
}

bool RemediationWorker::RunPending() {
  std::unique_lock lock(mu_);
  return !options_.thread && !stop_ && TakeAndRun(lock);
}

bool RemediationWorker::TakeAndRun(std::unique_lock<std::mutex>& lock) {
  if (!pending_) return false;
  RemediationPass pass = std::move(*pending_);
  pending_.reset();
  const uint64_t number = ++passes_started_;
  const Clock::time_point started = options_.now();
  running_ = Running{started, {}};
  lock.unlock();
  try {
    RunPass(std::move(pass), number, started);
  } catch (const std::exception& e) {
    // Thread boundary: the next pass starts from a clean slate; the sampler keeps running.
    LogEvent(spdlog::level::err, "remediation pass failed", {{"error", e.what()}});
  }
  lock.lock();
  running_.reset();
  cv_.notify_all();
  return true;
}

void RemediationWorker::RunPass(RemediationPass pass, uint64_t number, Clock::time_point started) {
  remediator_.BeginPass();
  RemediationPass skipped;
  skipped.present = pass.present;
  for (RemediationItem& item : pass.items) {
    if (Stopping()) break;
    if (options_.now() - started >= options_.deadline) {
      skipped.items.push_back(std::move(item));
      continue;
    }
    {
      std::lock_guard lock(mu_);
      running_->netdev = item.context.netdev;
    }
    outcomes_[item.context.netdev] = StepDevice(item, number);
  }
  Finish(pass);
  if (!skipped.items.empty() && !Stopping()) Requeue(std::move(skipped));
}

RemediationOutcome RemediationWorker::StepDevice(const RemediationItem& item, uint64_t number) {
  Clock::time_point read_at{};
  auto reread = [&] {
    read_at = Clock::now();  // compared with the sampler's observation times
    return ReadObservedQos(*reader_, *item.device, reader_->ReadTcpEcn());
  };
  std::optional<ObservedQos> after;
  RemediationOutcome outcome;
  outcome.state =
      remediator_.Step(item.context, *item.policy, item.state->observed, item.state->drift,
                       options_.remediator_now(), reread, nullptr, &after);
  outcome.pass = number;
  if (const auto* status = remediator_.Status(item.context.identity)) {
    outcome.counts = status->counts;
    outcome.interrupted_apply = status->interrupted_apply;
  }
  if (after) {
    outcome.read = std::make_shared<const ObservedQos>(std::move(*after));
    outcome.read_at = read_at;
  } else if (auto it = outcomes_.find(item.context.netdev); it != outcomes_.end()) {
    // Not read this time: the earlier read stays on offer until the sampler has a newer one.
    outcome.read = it->second.read;
    outcome.read_at = it->second.read_at;
  }
  return outcome;
}

void RemediationWorker::Finish(const RemediationPass& pass) {
  std::vector<std::string> identities;
  for (const auto& entry : pass.present) identities.push_back(entry.second);
  remediator_.Retain(identities, options_.remediator_now());
  std::erase_if(outcomes_, [&](const auto& entry) {
    return std::none_of(pass.present.begin(), pass.present.end(),
                        [&](const auto& p) { return p.first == entry.first; });
  });
  auto results = std::make_shared<RemediationResults>();
  results->passes_run = ++passes_run_;
  results->devices = outcomes_;
  results->suspended_reason = remediator_.suspended_reason();
  results_.Store(std::move(results));
}

}  // namespace roceqos
