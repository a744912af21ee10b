// PCIe link health: what the PCIe poller last read from sysfs (exporter/sampling/pcie_poller.h),
// attached to the snapshot. Only netdevs of the rendered snapshot are shown, so a device that
// left the selection or vanished has no series even while the poller's state still lists it.
//
// Series per netdev (docs/pcie.md "Cardinality"): speed and width, each current and max (4), and
// AER totals: three classes on the function's side, nonfatal and fatal on the upstream side (5).
// The upstream port's current speed and width are the same link's and are not rendered; its maximum
// only narrows bound="max".
//
// The GPU topology read on the same thread (docs/gpus.md) is rendered here too, in group "pcie":
// per selected netdev one series per GPU (its relation) and its NUMA node, per GPU its NUMA node.
// Constant between hotplugs, NICs x GPUs + NICs + GPUs series (80 on an 8-GPU, 8-NIC node).

#include <optional>
#include <set>
#include <string>
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

// Only pairs of netdevs in the rendered snapshot, as for the links. The GPUs' NUMA nodes do not
// depend on the selection: every GPU the last read found.
void RenderGpuTopology(const GpuTopology& topology, const std::set<std::string_view>& netdevs,
                       MetricSink& out) {
  FamilyBuilder pairs(FindMetric("roce_nic_gpu_topology"));
  for (const NicGpuRelation& pair : topology.pairs) {
    if (netdevs.contains(pair.netdev)) {
      pairs.Add({pair.netdev, pair.gpu_pci_bus_id, PcieRelationName(pair.relation)}, 1);
    }
  }
  pairs.AppendTo(out);
  FamilyBuilder nic_numa(FindMetric("roce_nic_numa_node"));
  for (const NicPlacement& nic : topology.nics) {
    if (netdevs.contains(nic.netdev) && nic.placement.numa_node) {
      nic_numa.Add({nic.netdev}, static_cast<double>(*nic.placement.numa_node));
    }
  }
  nic_numa.AppendTo(out);
  FamilyBuilder gpu_numa(FindMetric("roce_gpu_numa_node"));
  for (const GpuDevice& gpu : topology.gpus) {
    if (gpu.placement.numa_node) {
      gpu_numa.Add({gpu.pci_bus_id}, static_cast<double>(*gpu.placement.numa_node));
    }
  }
  gpu_numa.AppendTo(out);
}

}  // namespace

void RenderPcie(const Snapshot& snapshot, MetricSink& out) {
  if (!snapshot.pcie) return;  // --pcie.interval=0, or no round finished yet
  const PcieState& state = *snapshot.pcie;
  PcieFamilies f;
  std::set<std::string_view> netdevs;
  for (const DeviceSnapshot& snap : snapshot.devices) {
    if (!snap.device) continue;
    netdevs.insert(snap.device->name);
    auto found = state.links.find(snap.device->name);
    if (found != state.links.end()) AddLink(f, snap.device->name, found->second);
  }
  for (FamilyBuilder* family : {&f.speed, &f.width, &f.aer}) family->AppendTo(out);
  if (state.gpu_topology) RenderGpuTopology(*state.gpu_topology, netdevs, out);

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
