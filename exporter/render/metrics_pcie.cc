// PCIe link health: what the PCIe poller last read from sysfs (exporter/sampling/pcie_poller.h),
// attached to the snapshot. Only netdevs of the rendered snapshot are shown, so a device that
// left the selection or vanished has no series even while the poller's state still lists it.
//
// Series per netdev (docs/pcie.md "Cardinality"): speed and width, each current and max (4), and
// AER totals: three classes on the function's side, nonfatal and fatal on the upstream side (5).
// The upstream port's current speed and width are the same link's and are not rendered; its maximum
// only narrows bound="max".

#include <optional>
#include <string_view>

#include "exporter/core/pcie_state.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

struct PcieFamilies {
  FamilyBuilder speed{FindMetric("roce_pcie_link_speed_gts")};
  FamilyBuilder width{FindMetric("roce_pcie_link_width")};
  FamilyBuilder aer{FindMetric("roce_pcie_aer_errors_total")};
};

template <typename T>
void AddIf(FamilyBuilder& family, std::string_view netdev, std::string_view bound,
           std::optional<T> value) {
  if (value) family.Add({netdev, bound}, static_cast<double>(*value));
}

// The upstream port's correctable errors are left out (docs/pcie.md "Cardinality"): corrected
// replays the NIC's own correctable count and its signal-integrity counters already show.
void AddAer(FamilyBuilder& aer, std::string_view netdev, std::string_view side,
            const PcieDeviceLink& device) {
  const bool upstream = side == "upstream";
  for (auto [cls, value] :
       {std::pair{"correctable", upstream ? std::nullopt : device.aer_correctable},
        std::pair{"nonfatal", device.aer_nonfatal}, std::pair{"fatal", device.aer_fatal}}) {
    if (value) aer.Add({netdev, side, cls}, static_cast<double>(*value));
  }
}

void AddLink(PcieFamilies& f, std::string_view netdev, const PcieLink& link) {
  AddIf(f.speed, netdev, "current", link.function.speed_gts);
  AddIf(f.speed, netdev, "max", link.LinkMaxSpeedGts());
  AddIf(f.width, netdev, "current", link.function.width);
  AddIf(f.width, netdev, "max", link.LinkMaxWidth());
  AddAer(f.aer, netdev, "function", link.function);
  if (link.upstream) AddAer(f.aer, netdev, "upstream", *link.upstream);
}

}  // namespace

void RenderPcie(const Snapshot& snapshot, MetricSink& out) {
  if (!snapshot.pcie) return;  // --pcie.interval=0, or no round finished yet
  const PcieState& state = *snapshot.pcie;
  PcieFamilies f;
  for (const DeviceSnapshot& snap : snapshot.devices) {
    if (!snap.device) continue;
    auto found = state.links.find(snap.device->name);
    if (found != state.links.end()) AddLink(f, snap.device->name, found->second);
  }
  for (FamilyBuilder* family : {&f.speed, &f.width, &f.aer}) family->AppendTo(out);

  FamilyBuilder reads(FindMetric("roce_exporter_pcie_reads_total"));
  reads.Add({}, static_cast<double>(state.reads));
  reads.AppendTo(out);
  FamilyBuilder errors(FindMetric("roce_exporter_pcie_read_errors_total"));
  for (const auto& [reason, count] : state.errors) errors.Add({reason}, static_cast<double>(count));
  errors.AppendTo(out);
  FamilyBuilder interval(FindMetric("roce_exporter_pcie_interval_seconds"));
  interval.Add({}, state.interval_seconds);
  interval.AppendTo(out);
}

}  // namespace roceqos
