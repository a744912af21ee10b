#pragma once

// The host against the switch port it is cabled to: the switch's PFC, DSCP->priority (APP) and
// maximum frame size as it advertises them in LLDP, against what the NIC runs. Lossless RoCE
// needs both ends to agree; a NIC in sync with the policy can still face a switch that is not.
// Pure: the daemon computes it into each snapshot (SwitchComparer) and renders it as
// roce_qos_switch_mismatch, `check` prints it.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "collectors/device.h"
#include "collectors/lldp/neighbor.h"
#include "collectors/roce_gids.h"
#include "exporter/core/lldp_state.h"
#include "exporter/core/snapshot.h"
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

/// Bytes a frame carries beyond the IP MTU: Ethernet header (14) and FCS (4), plus one 802.1Q tag
/// (4) when the port sends tagged frames. The 802.3 Maximum Frame Size counts all of them (IEEE
/// Std 802.3 clause 79.3.4).
inline constexpr uint32_t kUntaggedFrameOverheadBytes = 18;
inline constexpr uint32_t kTaggedFrameOverheadBytes = 22;

/// Whether the netdev's RoCE frames carry an 802.1Q tag, and what says so: the `tagging` label of
/// roce_qos_switch_frame_overhead_bytes. Untagged only when the host knows every reason is absent.
enum class FrameTagging : uint8_t {
  kUntagged,      // DSCP trust, no VLAN netdev on it, every RoCE GID on its own netdev
  kTrustPcp,      // PCP trust: the priority travels in the tag
  kTrustUnknown,  // the trust mode is not readable (no DCB, or it failed)
  kVlanUpper,     // a VLAN netdev sends through it (Device::vlan_uppers)
  kGidOnNetdev,   // a RoCE GID of its RDMA port is on another netdev (a VLAN, or another netns)
  kGidsUnknown,   // its RDMA port's GID table was not read or not readable
};
inline constexpr EnumName<FrameTagging> kFrameTaggingNames[] = {
    {FrameTagging::kUntagged, "untagged"},          {FrameTagging::kTrustPcp, "trust_pcp"},
    {FrameTagging::kTrustUnknown, "trust_unknown"}, {FrameTagging::kVlanUpper, "vlan_upper"},
    {FrameTagging::kGidOnNetdev, "gid_netdev"},     {FrameTagging::kGidsUnknown, "gids_unknown"},
};
constexpr std::string_view FrameTaggingName(FrameTagging tagging) {
  return NameOf(kFrameTaggingNames, tagging);
}

struct FrameDecision {
  FrameTagging tagging = FrameTagging::kTrustUnknown;
  std::string detail;  // the netdev behind kVlanUpper / kGidOnNetdev, or why a fact is unknown

  bool Tagged() const { return tagging != FrameTagging::kUntagged; }
  uint32_t OverheadBytes() const {
    return Tagged() ? kTaggedFrameOverheadBytes : kUntaggedFrameOverheadBytes;
  }
  /// "untagged", "tagged: trust pcp", "tagged: VLAN ens1f0np0.100", ...
  std::string Text() const;
};

/// Whether `device` sends its RoCE frames tagged. Uncertainty counts the tag: a Maximum Frame
/// Size 4 bytes short drops every full-size tagged frame, a false alarm costs a look.
///  - trust: PCP, or not readable (`host.dcb`), is tagged;
///  - a VLAN netdev on it, or on its bond (`device.vlan_uppers`), is tagged;
///  - a RoCE GID on a netdev other than the device, its bond or its RDMA ports' netdevs is tagged
///    (a VLAN here or one in another netns; sysfs names it, not its netns); a GID table not read
///    (`gids` failed or absent) is tagged.
FrameDecision DecideFrameTagging(const ObservedQos& host, const Device& device,
                                 const NetdevRoceGids& gids);

/// The GIDs the LLDP round read for `netdev`; failed ("not read in the LLDP round") when it
/// read none.
NetdevRoceGids RoceGidsOf(const LldpState& state, std::string_view netdev);

/// One comparison. kInSync: they agree; kDrift: they differ; kAbsent: not comparable (the
/// switch did not advertise the TLV, or the host side is not readable), with the reason in
/// `host`/`switch_side`.
struct SwitchVerdict {
  SwitchField field;
  FieldStatus status = FieldStatus::kAbsent;
  std::string host;         // the NIC's value, e.g. "[3]", "9000 (untagged frame 9018)"
  std::string switch_side;  // the switch's advertised value, e.g. "[3, 4]", "9216"
  std::string why;          // what a mismatch breaks (empty unless kDrift)
};

/// Every SwitchField, in kSwitchFieldNames order. `frame` says which overhead the MTU gets.
std::vector<SwitchVerdict> CompareWithSwitch(const ObservedQos& host,
                                             const lldp::Neighbor& neighbor,
                                             const FrameDecision& frame);

/// Every device of a draft against its neighbour in draft.lldp, into
/// DeviceSnapshot::switch_comparison: the comparable verdicts of CompareWithSwitch and, with the
/// MTU, its frame overhead. Null for a device without the QoS state (nothing of the host to
/// compare) or without a neighbour, and for every device while draft.lldp is null.
/// The sampler attaches the LLDP state to every draft (every sample, 250 ms by default), so a
/// device's comparison is carried from the previous draft while its Device, its QoS state and
/// the LLDP state are the very objects it was computed from. They are immutable once attached,
/// so the same objects mean the same inputs; the carried inputs are held, so a freed object's
/// address cannot come back as a new one and pass for the old.
class SwitchComparer {
 public:
  void Compare(Snapshot& draft);

 private:
  struct Inputs {
    std::shared_ptr<const Device> device;
    std::shared_ptr<const QosDeviceState> qos;
    std::shared_ptr<const SwitchComparison> comparison;
    uint64_t pass = 0;  // the last Compare that saw the device; 0: never computed
  };
  std::shared_ptr<const LldpState> lldp_;
  uint64_t pass_ = 0;
  std::map<std::string, Inputs, std::less<>> last_;  // by netdev; a netdev gone is dropped
};

/// "leaf01 Ethernet12 (chassis 0c:29:aa:bb:cc:01)": the cabling line a person documents.
std::string DescribeNeighbor(const lldp::Neighbor& neighbor);

}  // namespace roceqos
