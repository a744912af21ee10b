#pragma once

#include <string_view>

#include "collectors/result.h"

namespace roceqos {

/// The `reason` label of roce_exporter_collect_errors_total: a small fixed set, so an unusual
/// errno cannot create unbounded series.
///   device_gone    ENODEV, ENXIO: the device vanished between discovery and the read
///   not_supported  EOPNOTSUPP/ENOTSUP where the source was expected to work
///   permission     EPERM, EACCES
///   unavailable    EPROTONOSUPPORT, EAFNOSUPPORT: the kernel lacks the interface
///   busy           EBUSY, EAGAIN, EINTR, ETIMEDOUT
///   malformed      no errno: a reply or value that failed validation
///   exception      errnum kErrnoException: a C++ exception escaped a source
///   other          anything else
std::string_view ErrorReason(const Error& error);

/// Every value ErrorReason returns. roce_exporter_collect_errors_total exports each of them at 0
/// for every source that has run, so rate()/increase() read 0 rather than nothing.
inline constexpr std::string_view kErrorReasons[] = {"device_gone", "not_supported", "permission",
                                                     "unavailable", "busy",          "malformed",
                                                     "exception",   "other"};

/// errnum of an Error made from a C++ exception that escaped a source (no real errno is negative).
inline constexpr int kErrnoException = -1;

}  // namespace roceqos
