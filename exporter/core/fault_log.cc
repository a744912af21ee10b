#include "exporter/core/fault_log.h"

#include <spdlog/spdlog.h>

#include "base/log_event.h"

namespace roceqos {

FaultLogLimiter::FaultLogLimiter(Clock::duration repeat_interval) : interval_(repeat_interval) {}

FaultLogLimiter::Decision FaultLogLimiter::Fault(std::string_view key, std::string_view reason,
                                                 Clock::time_point now) {
  auto it = faults_.find(std::string(key));
  if (it == faults_.end()) {
    faults_.emplace(std::string(key), State{std::string(reason), now, 0});
    return {Action::kFault, 0};
  }
  State& state = it->second;
  if (state.reason != reason) {
    Decision d{Action::kFault, state.suppressed};
    state = State{std::string(reason), now, 0};
    return d;
  }
  if (now - state.last_logged >= interval_) {
    Decision d{Action::kRepeat, state.suppressed};
    state.last_logged = now;
    state.suppressed = 0;
    return d;
  }
  ++state.suppressed;
  return {};
}

FaultLogLimiter::Decision FaultLogLimiter::Ok(std::string_view key, Clock::time_point /*now*/) {
  auto it = faults_.find(std::string(key));
  if (it == faults_.end()) return {};
  Decision d{Action::kRecovered, it->second.suppressed};
  faults_.erase(it);
  return d;
}

void FaultLogLimiter::Forget(std::string_view key) { faults_.erase(std::string(key)); }

void FaultLog::Fault(std::string_view key, std::string_view reason, std::string_view message,
                     spdlog::level::level_enum level, FaultLogLimiter::Clock::time_point now) {
  FaultLogLimiter::Decision d = limiter_.Fault(key, reason, now);
  switch (d.action) {
    case FaultLogLimiter::Action::kFault:
      LogEvent(level, "failing", {{"source", key}, {"reason", reason}, {"error", message}});
      break;
    case FaultLogLimiter::Action::kRepeat:
      LogEvent(level, "still failing",
               {{"source", key},
                {"reason", reason},
                {"error", message},
                {"repeats_not_logged", d.suppressed}});
      break;
    case FaultLogLimiter::Action::kNone:
    case FaultLogLimiter::Action::kRecovered:
      break;
  }
}

void FaultLog::Ok(std::string_view key, FaultLogLimiter::Clock::time_point now) {
  FaultLogLimiter::Decision d = limiter_.Ok(key, now);
  if (d.action == FaultLogLimiter::Action::kRecovered) {
    LogEvent(spdlog::level::info, "recovered",
             {{"source", key}, {"failures_not_logged", d.suppressed}});
  }
}

ErrorReason CountFailedRead(const Error& error, std::string_view key,
                            std::map<std::string, uint64_t>& errors, FaultLog& log) {
  const ErrorReason reason = ReasonOf(error);
  ++errors[std::string(ReasonName(reason))];
  log.Fault(key, ReasonName(reason), error.message);
  return reason;
}

}  // namespace roceqos
