#pragma once

// A thread that runs one round now and then one per interval until stopped: the loop the pollers
// (transceiver, LLDP) share. A round longer than the interval delays the next instead of bursting;
// Stop() wakes the wait at once and joins. An exception escaping a round is handed to
// `on_exception` and the thread goes on: a lost round, never a lost poller.

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "exporter/core/fault_log.h"

namespace roceqos {

class PeriodicThread {
 public:
  using Round = std::function<void()>;
  using OnException = std::function<void(const std::exception&)>;

  /// `name`: the thread's name (base/thread_name.h).
  PeriodicThread(std::string name, std::chrono::nanoseconds interval, Round round,
                 OnException on_exception);
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  /// Idempotent; Stop() then Start() runs a new thread.
  void Start();
  void Stop();

 private:
  void Run();
  void RunRound();

  std::string name_;
  std::chrono::nanoseconds interval_;
  Round round_;
  OnException on_exception_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

/// A poller's OnException: the round that threw is logged through `log` under `poller` (an error,
/// rate-limited like every fault) and lost; the poller keeps its thread and runs the next round.
PeriodicThread::OnException LogLostRound(FaultLog& log, std::string poller);

}  // namespace roceqos
