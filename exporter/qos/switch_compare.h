#pragma once

// The host against the switch port it is cabled to: the switch's PFC, DSCP->priority (APP) and
// maximum frame size as it advertises them in LLDP, against what the NIC runs. Lossless RoCE
// needs both ends to agree; a NIC in sync with the policy can still face a switch that is not.
// Pure: the daemon renders it as roce_qos_switch_mismatch, `check` prints it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "collectors/lldp/neighbor.h"
#include "exporter/qos/drift.h"

namespace roceqos {

enum class SwitchField : uint8_t { kPfc, kDscpPrio, kMtu };
inline constexpr EnumName<SwitchField> kSwitchFieldNames[] = {
    {SwitchField::kPfc, "pfc"},
    {SwitchField::kDscpPrio, "dscp_prio"},
    {SwitchField::kMtu, "mtu"},
};
constexpr std::string_view SwitchFieldName(SwitchField field) {
  return NameOf(kSwitchFieldNames, field);
}

/// Bytes a frame carries beyond the IP MTU on a RoCE port: Ethernet header (14), one 802.1Q tag
/// (4, RoCE on a VLAN is common and the switch's limit must cover it) and the FCS (4). The 802.3
/// Maximum Frame Size counts all of them (IEEE Std 802.3 clause 79.3.4).
inline constexpr uint32_t kFrameOverheadBytes = 22;

/// One comparison. kInSync: they agree; kDrift: they differ; kAbsent: not comparable (the
/// switch did not advertise the TLV, or the host side is not readable), with the reason in
/// `host`/`switch_side`.
struct SwitchVerdict {
  SwitchField field;
  FieldStatus status = FieldStatus::kAbsent;
  std::string host;         // the NIC's value, e.g. "[3]", "9000 (frame 9022)"
  std::string switch_side;  // the switch's advertised value, e.g. "[3, 4]", "9216"
  std::string why;          // what a mismatch breaks (empty unless kDrift)
};

/// Every SwitchField, in kSwitchFieldNames order.
std::vector<SwitchVerdict> CompareWithSwitch(const ObservedQos& host,
                                             const lldp::Neighbor& neighbor);

/// "leaf01 Ethernet12 (chassis 0c:29:aa:bb:cc:01)": the cabling line a person documents.
std::string DescribeNeighbor(const lldp::Neighbor& neighbor);

}  // namespace roceqos
