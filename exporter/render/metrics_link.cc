// Link health (docs/link.md): each figure from the link poller's ethtool netlink read where the
// kernel and driver give it, else from mlx5's `ethtool -S` names of the same snapshot, with a
// `source` label saying which. Only netdevs of the rendered snapshot are shown, so a device that
// left the selection or vanished has no series.

#include <optional>
#include <string_view>

#include "exporter/core/link_state.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

constexpr std::string_view kNetlink = "netlink";
constexpr std::string_view kEthtool = "ethtool";

struct LinkFamilies {
  FamilyBuilder fec_corrected{FindMetric("roce_link_fec_corrected_blocks_total")};
  FamilyBuilder fec_uncorrectable{FindMetric("roce_link_fec_uncorrectable_blocks_total")};
  FamilyBuilder symbol_errors{FindMetric("roce_link_symbol_errors_total")};
  FamilyBuilder fcs_errors{FindMetric("roce_link_fcs_errors_total")};
  FamilyBuilder down_events{FindMetric("roce_link_down_events_total")};
  FamilyBuilder fec_info{FindMetric("roce_link_fec_info")};
  FamilyBuilder ber{FindMetric("roce_link_pre_fec_ber")};
};

// The `ethtool -S` value at a mapped position, if the sample has it.
std::optional<uint64_t> EthtoolValue(const DeviceSnapshot& device,
                                     std::optional<uint32_t> LinkEthtoolNames::*slot) {
  if (!device.ethtool || !device.ethtool->link_names) return std::nullopt;
  const std::optional<uint32_t> at = (*device.ethtool->link_names).*slot;
  const std::vector<uint64_t>& values = device.ethtool->counters.values;
  if (!at || *at >= values.size()) return std::nullopt;
  return values[*at];
}

// netlink's figure when it has one, else the ethtool name's.
void AddEither(FamilyBuilder& family, std::string_view netdev, std::optional<uint64_t> netlink,
               std::optional<uint64_t> ethtool) {
  if (netlink) {
    family.Add({netdev, kNetlink}, static_cast<double>(*netlink));
  } else if (ethtool) {
    family.Add({netdev, kEthtool}, static_cast<double>(*ethtool));
  }
}

void AddNetlinkOnly(LinkFamilies& f, std::string_view netdev, const LinkReading& reading) {
  if (const std::optional<FecReply>& fec = reading.netlink.fec) {
    // Element 0 of each array is the total over lanes.
    if (!fec->corrected_blocks.empty()) {
      f.fec_corrected.Add({netdev}, static_cast<double>(fec->corrected_blocks[0]));
    }
    if (!fec->uncorrectable_blocks.empty()) {
      f.fec_uncorrectable.Add({netdev}, static_cast<double>(fec->uncorrectable_blocks[0]));
    }
    if (fec->active_link_mode) f.fec_info.Add({netdev, FecModeName(*fec->active_link_mode)}, 1);
  }
  if (reading.pre_fec_ber) f.ber.Add({netdev}, *reading.pre_fec_ber);
}

void AddDevice(LinkFamilies& f, const DeviceSnapshot& device, const LinkReading* reading) {
  const std::string_view netdev = device.device->name;
  std::optional<uint64_t> symbols, fcs, downs;
  if (reading != nullptr) {
    AddNetlinkOnly(f, netdev, *reading);
    if (const auto& stats = reading->netlink.std_stats) {
      symbols = stats->symbol_errors;
      fcs = stats->fcs_errors;
    }
    if (const auto& state = reading->netlink.state) downs = state->link_down_events;
  }
  AddEither(f.symbol_errors, netdev, symbols,
            EthtoolValue(device, &LinkEthtoolNames::symbol_errors));
  AddEither(f.fcs_errors, netdev, fcs, EthtoolValue(device, &LinkEthtoolNames::fcs_errors));
  AddEither(f.down_events, netdev, downs,
            EthtoolValue(device, &LinkEthtoolNames::link_down_events));
}

}  // namespace

void RenderLink(const Snapshot& snapshot, MetricSink& out) {
  LinkFamilies f;
  for (const DeviceSnapshot& device : snapshot.devices) {
    if (!device.device) continue;
    const LinkReading* reading = nullptr;
    if (snapshot.links) {
      auto found = snapshot.links->links.find(device.device->name);
      if (found != snapshot.links->links.end()) reading = &found->second;
    }
    AddDevice(f, device, reading);
  }
  for (FamilyBuilder* family : {&f.fec_corrected, &f.fec_uncorrectable, &f.symbol_errors,
                                &f.fcs_errors, &f.down_events, &f.fec_info, &f.ber}) {
    family->AppendTo(out);
  }
  if (!snapshot.links) return;  // --link.interval=0, or no round finished yet
  FamilyBuilder errors(FindMetric("roce_exporter_link_read_errors_total"));
  for (const auto& [reason, count] : snapshot.links->errors) {
    errors.Add({reason}, static_cast<double>(count));
  }
  errors.AppendTo(out);
}

}  // namespace roceqos
