#include "exporter/qos/switch_compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
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

SwitchVerdict CompareMtu(const ObservedQos& host, const lldp::Neighbor& neighbor) {
  if (!neighbor.max_frame_size)
    return Unverified(SwitchField::kMtu, "-", "no Maximum Frame Size TLV");
  const std::string theirs = fmt::format("{}", *neighbor.max_frame_size);
  if (!host.mtu.ok()) return Unverified(SwitchField::kMtu, "not readable", theirs);
  const uint32_t frame = host.mtu.value + kFrameOverheadBytes;
  return Verdict(SwitchField::kMtu, frame <= *neighbor.max_frame_size,
                 fmt::format("{} (frame {})", host.mtu.value, frame), theirs,
                 "frames the NIC sends at its MTU are longer than the switch port accepts: they "
                 "are dropped, and RDMA stalls on retransmissions");
}

}  // namespace

std::vector<SwitchVerdict> CompareWithSwitch(const ObservedQos& host,
                                             const lldp::Neighbor& neighbor) {
  return {ComparePfc(host, neighbor), CompareDscp(host, neighbor), CompareMtu(host, neighbor)};
}

std::string DescribeNeighbor(const lldp::Neighbor& neighbor) {
  const std::string& name =
      neighbor.system_name.empty() ? neighbor.chassis_id : neighbor.system_name;
  return fmt::format("{} {} (chassis {})", name, neighbor.port_id, neighbor.chassis_id);
}

}  // namespace roceqos
