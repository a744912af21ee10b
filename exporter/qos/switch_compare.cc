#include "exporter/qos/switch_compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

namespace roceqos {
namespace {

std::vector<int> Priorities(uint8_t mask) {
  std::vector<int> prios;
  for (int p = 0; p < 8; ++p)
    if ((mask >> p) & 1) prios.push_back(p);
  return prios;
}

SwitchVerdict Verdict(SwitchField field, bool agree, std::string host, std::string switch_side,
                      std::string_view why) {
  return {field, agree ? FieldStatus::kInSync : FieldStatus::kDrift, std::move(host),
          std::move(switch_side), agree ? std::string() : std::string(why)};
}

SwitchVerdict Unverified(SwitchField field, std::string host, std::string switch_side) {
  return {field, FieldStatus::kAbsent, std::move(host), std::move(switch_side), {}};
}

SwitchVerdict ComparePfc(const ObservedQos& host, const lldp::Neighbor& neighbor) {
  const auto& advertised = neighbor.dcbx.pfc_configuration;
  if (!advertised) return Unverified(SwitchField::kPfc, "-", "no PFC Configuration TLV");
  const std::string theirs =
      fmt::format("[{}]", fmt::join(Priorities(advertised->enabled_mask), ", "));
  if (!host.dcb.ok() || !host.dcb.value.pfc)
    return Unverified(SwitchField::kPfc, "not readable", theirs);
  const uint8_t ours_mask = host.dcb.value.pfc->enabled_mask;
  return Verdict(SwitchField::kPfc, ours_mask == advertised->enabled_mask,
                 fmt::format("[{}]", fmt::join(Priorities(ours_mask), ", ")), theirs,
                 "a priority lossless on one end only: the other end drops its frames instead of "
                 "pausing, or pauses a priority the NIC does not honour");
}

std::string FormatDscpMap(const std::map<uint16_t, uint8_t>& map) {
  std::vector<std::string> parts;
  parts.reserve(map.size());
  for (const auto& [dscp, prio] : map) parts.push_back(fmt::format("{}:{}", dscp, prio));
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

SwitchVerdict CompareDscp(const ObservedQos& host, const lldp::Neighbor& neighbor) {
  const auto& advertised = neighbor.dcbx.application_priority;
  const std::map<uint16_t, uint8_t> theirs =
      advertised ? LowestDscpPriorities(advertised->entries) : std::map<uint16_t, uint8_t>{};
  if (theirs.empty())
    return Unverified(SwitchField::kDscpPrio, "-",
                      "no DSCP entries in an Application Priority TLV");
  if (!host.dcb.ok())
    return Unverified(SwitchField::kDscpPrio, "not readable", FormatDscpMap(theirs));
  // Only the DSCPs the switch advertises: a host entry the switch does not list is its own.
  const std::map<uint16_t, uint8_t> all_ours = LowestDscpPriorities(host.dcb.value.apps);
  std::map<uint16_t, uint8_t> ours;
  bool agree = true;
  for (const auto& [dscp, prio] : theirs) {
    auto it = all_ours.find(dscp);
    if (it == all_ours.end()) {
      agree = false;
      continue;
    }
    ours.emplace(dscp, it->second);
    agree = agree && it->second == prio;
  }
  return Verdict(SwitchField::kDscpPrio, agree, FormatDscpMap(ours), FormatDscpMap(theirs),
                 "the NIC and the switch queue the same DSCP on different priorities: RDMA lands "
                 "in a lossy queue on one side");
}

SwitchVerdict CompareMtu(const ObservedQos& host, const lldp::Neighbor& neighbor,
                         const FrameDecision& frame_kind) {
  if (!neighbor.max_frame_size)
    return Unverified(SwitchField::kMtu, "-", "no Maximum Frame Size TLV");
  const std::string theirs = fmt::format("{}", *neighbor.max_frame_size);
  if (!host.mtu.ok()) return Unverified(SwitchField::kMtu, "not readable", theirs);
  const uint32_t frame = host.mtu.value + frame_kind.OverheadBytes();
  const std::string ours =
      frame_kind.Tagged()
          ? fmt::format("{} (tagged frame {}: {})", host.mtu.value, frame, frame_kind.Text())
          : fmt::format("{} (untagged frame {})", host.mtu.value, frame);
  return Verdict(SwitchField::kMtu, frame <= *neighbor.max_frame_size, ours, theirs,
                 "frames the NIC sends at its MTU are longer than the switch port accepts: they "
                 "are dropped, and RDMA stalls on retransmissions");
}

// The netdevs a RoCE GID of this device may sit on without a tag: the device, its bond (RoCE
// LAG adds the GIDs to the bond) and the netdevs its RDMA ports are bound to.
bool OwnNetdev(const Device& device, std::string_view netdev) {
  if (netdev == device.name || (!device.master.empty() && netdev == device.master)) return true;
  return std::any_of(device.rdma_ports.begin(), device.rdma_ports.end(),
                     [&](const RdmaPort& port) { return port.netdev == netdev; });
}

std::optional<FrameDecision> TaggedByTrust(const ObservedQos& host) {
  if (!host.dcb.ok())
    return FrameDecision{FrameTagging::kTrustUnknown,
                         host.dcb.absent() ? "no DCB" : "DCB not readable"};
  if (host.dcb.value.Trust() == TrustMode::kPcp) return FrameDecision{FrameTagging::kTrustPcp, ""};
  return std::nullopt;
}

std::optional<FrameDecision> TaggedByGids(const Device& device, const NetdevRoceGids& gids) {
  if (!gids.ok())
    return FrameDecision{FrameTagging::kGidsUnknown, gids.failed() ? gids.error : "no GID table"};
  for (const RoceGid& gid : gids.value)
    if (!OwnNetdev(device, gid.netdev))
      return FrameDecision{FrameTagging::kGidOnNetdev, gid.netdev};
  return std::nullopt;
}

}  // namespace

std::string FrameDecision::Text() const {
  switch (tagging) {
    case FrameTagging::kUntagged:
      return "untagged";
    case FrameTagging::kTrustPcp:
      return "trust pcp";
    case FrameTagging::kTrustUnknown:
      return fmt::format("trust unknown, {}", detail);
    case FrameTagging::kVlanUpper:
      return fmt::format("VLAN {}", detail);
    case FrameTagging::kGidOnNetdev:
      return fmt::format("RoCE GID on {}", detail);
    case FrameTagging::kGidsUnknown:
      return fmt::format("RoCE GIDs unknown, {}", detail);
  }
  return std::string(FrameTaggingName(tagging));
}

FrameDecision DecideFrameTagging(const ObservedQos& host, const Device& device,
                                 const NetdevRoceGids& gids) {
  if (auto by_trust = TaggedByTrust(host)) return *by_trust;
  if (!device.vlan_uppers.empty())
    return FrameDecision{FrameTagging::kVlanUpper, device.vlan_uppers.front()};
  if (auto by_gids = TaggedByGids(device, gids)) return *by_gids;
  return FrameDecision{FrameTagging::kUntagged, ""};
}

NetdevRoceGids RoceGidsOf(const LldpState& state, std::string_view netdev) {
  auto it = state.roce_gids.find(std::string(netdev));
  if (it == state.roce_gids.end()) return NetdevRoceGids::Failed("not read in the LLDP round");
  return it->second;
}

std::vector<SwitchVerdict> CompareWithSwitch(const ObservedQos& host,
                                             const lldp::Neighbor& neighbor,
                                             const FrameDecision& frame) {
  return {ComparePfc(host, neighbor), CompareDscp(host, neighbor),
          CompareMtu(host, neighbor, frame)};
}

namespace {

std::shared_ptr<const SwitchComparison> CompareDevice(const DeviceSnapshot& snap,
                                                      const LldpState& state) {
  if (!snap.device || !snap.qos) return nullptr;  // no QoS stage: nothing of the host to compare
  const std::string& netdev = snap.device->name;
  const lldp::Neighbor* neighbor = FindLldpNeighbor(state, netdev);
  if (neighbor == nullptr) return nullptr;
  const FrameDecision frame =
      DecideFrameTagging(snap.qos->observed, *snap.device, RoceGidsOf(state, netdev));
  auto out = std::make_shared<SwitchComparison>();
  for (const SwitchVerdict& verdict : CompareWithSwitch(snap.qos->observed, *neighbor, frame)) {
    if (verdict.status != FieldStatus::kInSync && verdict.status != FieldStatus::kDrift) continue;
    out->fields.push_back({SwitchFieldName(verdict.field), verdict.status == FieldStatus::kDrift});
    if (verdict.field == SwitchField::kMtu)
      out->frame = SwitchFrameOverhead{FrameTaggingName(frame.tagging), frame.OverheadBytes()};
  }
  return out;
}

}  // namespace

void SwitchComparer::Compare(Snapshot& draft) {
  const bool same_lldp = draft.lldp == lldp_;
  ++pass_;
  for (DeviceSnapshot& snap : draft.devices) {
    if (!snap.device) continue;
    auto it = last_.find(snap.device->name);
    if (it == last_.end()) it = last_.emplace(snap.device->name, Inputs{}).first;
    Inputs& last = it->second;
    if (!same_lldp || last.device != snap.device || last.qos != snap.qos || last.pass == 0) {
      last.device = snap.device;
      last.qos = snap.qos;
      last.comparison = draft.lldp ? CompareDevice(snap, *draft.lldp) : nullptr;
    }
    last.pass = pass_;
    snap.switch_comparison = last.comparison;
  }
  std::erase_if(last_, [this](const auto& entry) { return entry.second.pass != pass_; });
  lldp_ = draft.lldp;
}

std::string DescribeNeighbor(const lldp::Neighbor& neighbor) {
  const std::string& name =
      neighbor.system_name.empty() ? neighbor.chassis_id : neighbor.system_name;
  return fmt::format("{} {} (chassis {})", name, neighbor.port_id, neighbor.chassis_id);
}

}  // namespace roceqos
