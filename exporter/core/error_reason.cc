#include "exporter/core/error_reason.h"

#include <cerrno>

namespace roceqos {

ErrorReason ReasonOf(const Error& error) {
  switch (error.errnum) {
    case 0:
      return ErrorReason::kMalformed;
    case kErrnoException:
      return ErrorReason::kException;
    case ENODEV:
    case ENXIO:
      return ErrorReason::kDeviceGone;
    case EOPNOTSUPP:
#if ENOTSUP != EOPNOTSUPP
    case ENOTSUP:
#endif
      return ErrorReason::kNotSupported;
    case EPERM:
    case EACCES:
      return ErrorReason::kPermission;
    case EPROTONOSUPPORT:
    case EAFNOSUPPORT:
      return ErrorReason::kUnavailable;
    case EBUSY:
    case EAGAIN:
    case EINTR:
    case ETIMEDOUT:
      return ErrorReason::kBusy;
    default:
      return ErrorReason::kOther;
  }
}

}  // namespace roceqos
