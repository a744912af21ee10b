#include "collectors/device.h"

namespace roceqos {

std::string_view DeviceRoleName(DeviceRole role) {
  switch (role) {
    case DeviceRole::kPf:
      return "pf";
    case DeviceRole::kVf:
      return "vf";
    case DeviceRole::kBond:
      return "bond";
    case DeviceRole::kBondMember:
      return "bond_member";
    case DeviceRole::kOther:
      break;
  }
  return "other";
}

}  // namespace roceqos
