#pragma once

// The three outcomes of reading one value from the host, shared by every layer that carries a
// read value upward: absent is not failed (docs/architecture.md "Rules that hold across the
// layers").

#include <cstdint>
#include <string>
#include <utility>

namespace roceqos {

/// A value read from one source: absent (the source does not exist on this host or device, e.g.
/// no MOFED sysfs), ok, or failed (it exists but could not be read or made no sense).
template <typename T>
struct Observed {
  enum class State : uint8_t { kAbsent, kOk, kFailed };
  State state = State::kAbsent;
  T value{};
  std::string error;  // why it failed: path and reason
  int errnum = 0;     // the errno behind a failure; 0 when the content was malformed

  static Observed Ok(T v) { return Observed{State::kOk, std::move(v), {}, 0}; }
  static Observed Absent() { return Observed{}; }
  static Observed Failed(std::string why, int errnum = 0) {
    return Observed{State::kFailed, T{}, std::move(why), errnum};
  }

  bool ok() const { return state == State::kOk; }
  bool absent() const { return state == State::kAbsent; }
  bool failed() const { return state == State::kFailed; }
  bool operator==(const Observed&) const = default;
};

}  // namespace roceqos
