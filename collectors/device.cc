#include "collectors/device.h"

namespace roceqos {

std::string_view DeviceRoleName(DeviceRole role) { return NameOf(kDeviceRoleNames, role, "other"); }

}  // namespace roceqos
