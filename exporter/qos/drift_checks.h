#pragma once

// The comparison of each QoS field with its policy value, one function per field (drift.cc). The
// field table (qos_fields.cc) names which one compares a field; EvaluateDrift runs them through
// it. Internal to exporter/qos.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/observed.h"
#include "collectors/dcb.h"
#include "collectors/dcqcn_params.h"
#include "exporter/core/qos_state.h"
#include "exporter/qos/policy.h"

namespace roceqos::drift_check {

/// "tsa [..] bandwidth [..]": how verdicts and the state fingerprint write ETS.
std::string EtsText(const std::array<uint8_t, kNumTcs>& tsa,
                    const std::array<uint8_t, kNumTcs>& bw);

FieldVerdict Trust(TrustMode expected, const Observed<QosState>& dcb);
FieldVerdict Pfc(uint8_t expected, const Observed<QosState>& dcb);
FieldVerdict DscpPrio(const std::map<uint8_t, uint8_t>& expected, const Observed<QosState>& dcb);
FieldVerdict PrioTc(const std::array<uint8_t, kNumPriorities>& expected,
                    const Observed<QosState>& dcb);
FieldVerdict Ets(const EtsPolicy& expected, const Observed<QosState>& dcb);
FieldVerdict Buffer(const BufferPolicy& expected, const Observed<QosState>& dcb);
FieldVerdict RoceTos(uint8_t expected, const std::vector<PortTos>& ports);
/// The per-priority enables of the notification (kDcqcnNp) or reaction (kDcqcnRp) point.
FieldVerdict Dcqcn(QosField field, uint8_t expected,
                   const std::array<Observed<bool>, kNumPriorities>& enabled);
FieldVerdict TcpEcn(int expected, const Observed<int>& tcp_ecn);
FieldVerdict Mtu(uint32_t expected, const Observed<uint32_t>& mtu);
FieldVerdict LinkSpeed(uint32_t minimum, const Observed<uint32_t>& speed);
FieldVerdict SriovNumVfs(uint32_t expected, const Observed<uint32_t>& vfs);
/// CNP marking: kCnpDscp or kCnpPrio.
FieldVerdict Cnp(QosField field, uint8_t expected, const Observed<uint8_t>& observed);
FieldVerdict DcqcnParams(const QosPolicy& policy, const Observed<roceqos::DcqcnParams>& observed,
                         std::vector<DcqcnParamVerdict>* details);

}  // namespace roceqos::drift_check
