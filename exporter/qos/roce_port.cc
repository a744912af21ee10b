#include "exporter/qos/roce_port.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>

#include <algorithm>
#include <array>

#include "base/enum_names.h"

namespace roceqos {
namespace {

constexpr EnumName<RocePortReason> kRocePortReasonNames[] = {
    {RocePortReason::kRule, "rule"},
    {RocePortReason::kAllPorts, "all_ports"},
    {RocePortReason::kConfigured, "configured"},
    {RocePortReason::kTraffic, "traffic"},
    {RocePortReason::kRemembered, "remembered"},
    {RocePortReason::kUnknown, "unknown"},
    {RocePortReason::kNoRoceTraffic, "no_roce_traffic"},
};

// mlx5 en_stats.c vport group (§3.3): the RoCE packets of the vport, both directions.
constexpr std::array<std::string_view, 4> kEthtoolRoceCounters = {
    "rx_vport_rdma_unicast_packets", "tx_vport_rdma_unicast_packets",
    "rx_vport_rdma_multicast_packets", "tx_vport_rdma_multicast_packets"};
// RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME values: mlx5_ib's basic Q counters and optional
// counters (§5.7), rxe_hw_counters.c (§6).
constexpr std::array<std::string_view, 7> kRdmaRoceCounters = {
    "rx_write_requests", "rx_read_requests", "rx_atomic_requests", "rdma_rx_packets",
    "rdma_tx_packets",   "sent_pkts",        "rcvd_pkts"};

template <size_t N>
void AddCounters(const CounterSet& set, const std::array<std::string_view, N>& wanted,
                 RoceTraffic& traffic) {
  if (!set.names) return;
  const std::vector<std::string>& names = *set.names;
  for (size_t i = 0; i < names.size() && i < set.values.size(); ++i) {
    if (std::find(wanted.begin(), wanted.end(), names[i]) == wanted.end()) continue;
    traffic.known = true;
    traffic.packets += set.values[i];
    if (set.values[i] > 0 && traffic.evidence.empty())
      traffic.evidence = fmt::format("{} {}", names[i], set.values[i]);
  }
}

constexpr std::string_view kFactoryDefaults =
    "at factory defaults (PFC off, trust pcp, no DSCP entry, no global traffic_class)";

}  // namespace

std::string_view RocePortReasonName(RocePortReason reason) {
  return NameOf(kRocePortReasonNames, reason);
}

RoceTraffic RoceTrafficOf(const CounterSet* ethtool, std::span<const CounterSet* const> rdma) {
  RoceTraffic traffic;
  if (ethtool != nullptr) AddCounters(*ethtool, kEthtoolRoceCounters, traffic);
  for (const CounterSet* set : rdma)
    if (set != nullptr) AddCounters(*set, kRdmaRoceCounters, traffic);
  return traffic;
}

std::optional<std::string> ConfiguredEvidence(const ObservedQos& observed) {
  if (!observed.dcb.ok()) return std::nullopt;
  const QosState& dcb = observed.dcb.value;
  std::string out;
  auto add = [&out](const std::string& what) { out += (out.empty() ? "" : ", ") + what; };
  if (dcb.pfc && dcb.pfc->enabled_mask != 0) add("pfc " + PriorityListText(dcb.pfc->enabled_mask));
  if (dcb.Trust() == TrustMode::kDscp) add("trust dscp");
  const auto dscp_entries = std::count_if(dcb.apps.begin(), dcb.apps.end(), [](const DcbApp& a) {
    return a.selector == IEEE_8021QAZ_APP_SEL_DSCP;
  });
  if (dscp_entries > 0)
    add(fmt::format("{} DSCP APP entr{}", dscp_entries, dscp_entries == 1 ? "y" : "ies"));
  for (const PortTos& port : observed.roce_tos) {
    const auto& tclass = port.tos.mofed_tclass;
    if (tclass.ok() && tclass.value)
      add(fmt::format("traffic_class {} on {}/{}", *tclass.value, port.device, port.port));
  }
  return out;
}

RocePortClass ClassifyRocePort(const RocePortInput& in) {
  if (in.rule != "default")
    return {true, RocePortReason::kRule, fmt::format("policy rule \"{}\" names it", in.rule)};
  if (in.mode == RocePorts::kAll) return {true, RocePortReason::kAllPorts, "roce_ports: all"};
  const std::optional<std::string> configured =
      in.observed ? ConfiguredEvidence(*in.observed) : std::nullopt;
  if (configured && !configured->empty())
    return {true, RocePortReason::kConfigured, "configured: " + *configured};
  if (in.traffic.packets > 0)
    return {true, RocePortReason::kTraffic,
            fmt::format("RoCE traffic since the driver loaded ({})", in.traffic.evidence)};
  if (!in.remembered.empty()) return {true, RocePortReason::kRemembered, in.remembered};
  if (!configured)
    return {true, RocePortReason::kUnknown,
            "the DCB state cannot be read, so factory defaults cannot be told apart"};
  if (!in.traffic.known)
    return {true, RocePortReason::kUnknown,
            "no RoCE counter could be read, so RoCE traffic cannot be ruled out"};
  return {false, RocePortReason::kNoRoceTraffic,
          fmt::format("{} and no RoCE traffic since the driver loaded", kFactoryDefaults)};
}

void RocePortMemory::NoteTraffic(const std::string& identity, const RoceTraffic& seen) {
  if (seen.known) ports_[identity].last_traffic = seen;
}

void RocePortMemory::Learn(const std::string& identity, const RocePortClass& port_class,
                           const DeviceDrift& drift) {
  Port& port = ports_[identity];
  if (!port.remembered.empty()) return;
  const bool known_in_sync =
      drift.InSync() &&
      std::any_of(drift.fields.begin(), drift.fields.end(),
                  [](const FieldVerdict& v) { return v.status == FieldStatus::kInSync; });
  if (port_class.reason == RocePortReason::kConfigured ||
      port_class.reason == RocePortReason::kTraffic)
    port.remembered = "earlier in this process: " + port_class.detail;
  else if (known_in_sync)
    port.remembered = "in sync earlier in this process";
}

std::string RocePortMemory::Remembered(const std::string& identity) const {
  auto it = ports_.find(identity);
  return it == ports_.end() ? std::string() : it->second.remembered;
}

RoceTraffic RocePortMemory::WithLastKnown(const std::string& identity, RoceTraffic traffic) const {
  if (traffic.known) return traffic;
  auto it = ports_.find(identity);
  if (it == ports_.end() || !it->second.last_traffic) return traffic;
  return *it->second.last_traffic;
}

std::string RocePortText(const RocePortClass& port_class) {
  return fmt::format("{}: {}", port_class.checked ? "RoCE port" : "unconfigured",
                     port_class.detail);
}

}  // namespace roceqos
