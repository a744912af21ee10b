#pragma once

// A NIC configured exactly like the embedded default policy, as the QoS engine observes it:
// real capture 07 (`mlnx_qos --trust dscp --pfc 0,0,0,1,0,0,0,0`: 64 DSCP entries d -> d/8, PFC on
// 3, cable 7 m, mlx5's initial ETS) plus MOFED DCQCN enabled on priority 3, CNPs on DSCP 48 and
// priority 6, the RoCE ToS 106, tcp_ecn 1, MTU 4200, a 200 Gb/s link and 8 VFs. Tests and
// benchmarks change one thing and look at the consequences.

#include <linux/dcbnl.h>

#include <string>

#include "exporter/qos/drift.h"

namespace roceqos::qos_test {

inline QosState DefaultPolicyDcbState() {
  QosState s;
  s.pfc = PfcState{8, 0x08, 0, 7};
  EtsState ets;
  ets.prio_tc = {1, 0, 2, 3, 4, 5, 6, 7};  // mlx5e_ets_init: prio 0 <-> 1
  ets.tc_tsa.fill(IEEE_8021QAZ_TSA_VENDOR);
  ets.tc_tx_bw.fill(100);
  s.ets = ets;
  for (uint16_t dscp = 0; dscp < 64; ++dscp)
    s.apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(dscp / 8), dscp});
  BufferState buffer;
  buffer.prio_buffer = {0, 0, 0, 1, 0, 0, 0, 0};
  buffer.size = {130944, 130944, 0, 0, 0, 0, 0, 0};
  buffer.total_size = 262016;
  s.buffer = buffer;
  s.maxrate_kbps = std::array<uint64_t, 8>{};
  s.dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE | DCB_CAP_DCBX_VER_CEE;
  return s;
}

inline ObservedQos DefaultPolicyObservation(const std::string& rdma_device = "mlx5_0") {
  ObservedQos o;
  o.dcb = Observed<QosState>::Ok(DefaultPolicyDcbState());
  for (int p = 0; p < 8; ++p) {
    o.dcqcn.np_enabled[p] = Observed<bool>::Ok(p == 3);
    o.dcqcn.rp_enabled[p] = Observed<bool>::Ok(p == 3);
  }
  o.dcqcn.cnp_dscp = Observed<uint8_t>::Ok(48);  // MOFED's defaults, as the policy wants
  o.dcqcn.cnp_802p_prio = Observed<uint8_t>::Ok(6);
  PortTos port;
  port.device = rdma_device;
  port.port = 1;
  port.tos.mofed_tclass = Observed<std::optional<uint8_t>>::Ok(106);
  o.roce_tos.push_back(port);
  o.tcp_ecn = Observed<int>::Ok(1);
  o.mtu = Observed<uint32_t>::Ok(4200);
  o.link.speed_mbps = Observed<uint32_t>::Ok(200000);
  o.link.sriov_numvfs = Observed<uint32_t>::Ok(8);
  return o;
}

}  // namespace roceqos::qos_test
