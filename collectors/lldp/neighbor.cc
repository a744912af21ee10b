#include "collectors/lldp/neighbor.h"

namespace roceqos::lldp {

void AddCustomTlvs(Neighbor& neighbor, const std::vector<CustomTlv>& tlvs,
                   std::string_view context) {
  for (const CustomTlv& tlv : tlvs) {
    Result<bool> added = AddCustomTlv(neighbor.dcbx, tlv.oui, tlv.subtype,
                                      std::as_bytes(std::span(tlv.info)), context);
    if (!added) neighbor.tlv_errors.push_back(added.error().message);
  }
}

}  // namespace roceqos::lldp
