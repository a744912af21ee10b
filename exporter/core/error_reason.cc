#include "exporter/core/error_reason.h"

#include <cerrno>

namespace roceqos {

std::string_view ErrorReason(const Error& error) {
  switch (error.errnum) {
    case 0:
      return "malformed";
    case kErrnoException:
      return "exception";
    case ENODEV:
    case ENXIO:
      return "device_gone";
    case EOPNOTSUPP:
#if ENOTSUP != EOPNOTSUPP
    case ENOTSUP:
#endif
      return "not_supported";
    case EPERM:
    case EACCES:
      return "permission";
    case EPROTONOSUPPORT:
    case EAFNOSUPPORT:
      return "unavailable";
    case EBUSY:
    case EAGAIN:
    case EINTR:
    case ETIMEDOUT:
      return "busy";
    default:
      return "other";
  }
}

}  // namespace roceqos
