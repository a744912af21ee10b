#include "exporter/core/periodic_thread.h"

#include <utility>

#include "base/thread_name.h"

namespace roceqos {

PeriodicThread::PeriodicThread(std::string name, std::chrono::nanoseconds interval, Round round,
                               OnException on_exception)
    : name_(std::move(name)),
      interval_(interval),
      round_(std::move(round)),
      on_exception_(std::move(on_exception)) {}

PeriodicThread::~PeriodicThread() { Stop(); }

void PeriodicThread::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = NamedThread(name_, [this] { Run(); });
}

void PeriodicThread::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void PeriodicThread::RunRound() {
  try {
    round_();
  } catch (const std::exception& e) {
    if (on_exception_) on_exception_(e);
  }
}

void PeriodicThread::Run() {
  using Steady = std::chrono::steady_clock;
  auto next = Steady::now();
  for (;;) {
    RunRound();
    next += interval_;
    const auto now = Steady::now();
    if (next < now) next = now;
    std::unique_lock lock(mu_);
    if (cv_.wait_until(lock, next, [&] { return stop_; })) return;
  }
}

PeriodicThread::OnException LogLostRound(FaultLog& log, std::string poller) {
  return [&log, poller = std::move(poller)](const std::exception& e) {
    log.Fault(poller, "exception", e.what(), spdlog::level::err);
  };
}

}  // namespace roceqos
