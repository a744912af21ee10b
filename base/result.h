#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace roceqos {

/// A failure from the kernel or from parsing: the errno (0 when there is none, e.g. a malformed
/// reply) and a message that names what was being done ("RTM_GETDCB ens1f0np0: ...").
struct Error {
  int errnum = 0;
  std::string message;

  /// EOPNOTSUPP/ENOTSUP/ENODEV-style answers mean "this device has no such feature", which callers
  /// report as absent, not as a failure.
  bool NotSupported() const { return errnum == EOPNOTSUPP || errnum == ENOTSUP; }
};

/// Minimal expected<T, Error>: the codebase is C++20, where std::expected does not exist.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : data_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return data_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(data_); }

 private:
  std::variant<T, Error> data_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

inline Error MakeError(int errnum, std::string message) {
  return Error{errnum, std::move(message)};
}

}  // namespace roceqos
