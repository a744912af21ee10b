#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include "base/enum_names.h"
#include "base/result.h"

namespace roceqos {

/// The `reason` label of roce_exporter_collect_errors_total: a small fixed set, so an unusual
/// errno cannot create unbounded series.
enum class ErrorReason : uint8_t {
  kDeviceGone,    // ENODEV, ENXIO: the device vanished between discovery and the read
  kNotSupported,  // EOPNOTSUPP/ENOTSUP where the source was expected to work
  kPermission,    // EPERM, EACCES
  kUnavailable,   // EPROTONOSUPPORT, EAFNOSUPPORT: the kernel lacks the interface
  kBusy,          // EBUSY, EAGAIN, EINTR, ETIMEDOUT
  kMalformed,     // no errno: a reply or value that failed validation
  kException,     // errnum kErrnoException: a C++ exception escaped a source
  kOther,         // anything else
};

/// Every reason with its label value. roce_exporter_collect_errors_total exports each of them at
/// 0 for every source that has run, so rate()/increase() read 0 rather than nothing.
inline constexpr EnumName<ErrorReason> kErrorReasonNames[] = {
    {ErrorReason::kDeviceGone, "device_gone"},
    {ErrorReason::kNotSupported, "not_supported"},
    {ErrorReason::kPermission, "permission"},
    {ErrorReason::kUnavailable, "unavailable"},
    {ErrorReason::kBusy, "busy"},
    {ErrorReason::kMalformed, "malformed"},
    {ErrorReason::kException, "exception"},
    {ErrorReason::kOther, "other"},
};

/// The reason `error` is counted under, from its errnum.
ErrorReason ReasonOf(const Error& error);

/// The label value of `reason`.
constexpr std::string_view ReasonName(ErrorReason reason) {
  return NameOf(kErrorReasonNames, reason);
}

/// A key of the per-source failure counts (Snapshot::errors): the failed source, a `source` label
/// value ("ethtool", a stage's Source()), and why. The reason's name lives in kErrorReasonNames.
struct CollectErrorKey {
  std::string source;
  ErrorReason reason = ErrorReason::kOther;
  bool operator<(const CollectErrorKey& other) const {
    return std::tie(source, reason) < std::tie(other.source, other.reason);
  }
};

/// errnum of an Error made from a C++ exception that escaped a source (no real errno is negative).
inline constexpr int kErrnoException = -1;

}  // namespace roceqos
