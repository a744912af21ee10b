#pragma once

// The default spdlog logger, redirected to a string in the exporter's logfmt while the object
// lives, so tests can assert the exact lines an operator would read.

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "exporter/core/logging.h"

namespace roceqos {

class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(lines_);
    sink->set_formatter(MakeLogFormatter("logfmt"));
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  /// What was logged since the last Take().
  std::string Take() { return std::exchange(lines_, std::ostringstream()).str(); }

 private:
  std::ostringstream lines_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace roceqos
