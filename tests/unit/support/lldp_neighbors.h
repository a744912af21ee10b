#pragma once

// LLDP neighbours for tests: a leaf switch port configured like the host's standard policy.

#include <linux/dcbnl.h>

#include <string>

#include "collectors/lldp/neighbor.h"

namespace roceqos::lldp_test {

inline lldp::PfcConfiguration Pfc(uint8_t mask, bool willing = false) {
  lldp::PfcConfiguration pfc;
  pfc.willing = willing;
  pfc.cap = 8;
  pfc.enabled_mask = mask;
  return pfc;
}

inline lldp::Neighbor Named(std::string system_name, std::string port_id) {
  lldp::Neighbor n;
  n.system_name = std::move(system_name);
  n.port_id = std::move(port_id);
  return n;
}

/// leaf01 Ethernet12 (chassis 0c:29:aa:bb:cc:01): PFC on 3, DSCP 26 -> 3, UDP 4791 -> 3, MFS 9216.
inline lldp::Neighbor Leaf() {
  lldp::Neighbor n = Named("leaf01", "Ethernet12");
  n.chassis_id = "0c:29:aa:bb:cc:01";
  n.max_frame_size = 9216;
  n.dcbx.pfc_configuration = Pfc(0x08);
  n.dcbx.application_priority =
      lldp::ApplicationPriority{.entries = {DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, 3, 26},
                                            DcbApp{IEEE_8021QAZ_APP_SEL_DGRAM, 3, 4791}},
                                .skipped = {}};
  return n;
}

}  // namespace roceqos::lldp_test
