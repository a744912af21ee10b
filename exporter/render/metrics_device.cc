// Inventory: selected netdevs and the RDMA ports bound to them.

#include <string>

#include "base/enum_names.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {
namespace {

// enum ib_port_state (rdma/ib_verbs.h), as `rdma link` prints it.
constexpr EnumName<uint8_t> kPortStateNames[] = {
    {0, "nop"}, {1, "down"}, {2, "init"}, {3, "armed"}, {4, "active"}, {5, "active_defer"},
};

std::string_view PortStateName(uint8_t state) { return NameOf(kPortStateNames, state); }

}  // namespace

void RenderDeviceInfo(const Snapshot& snapshot, MetricSink& out) {
  FamilyBuilder netdev_info(FindMetric("roce_netdev_info"));
  FamilyBuilder device_info(FindMetric("roce_device_info"));
  FamilyBuilder carrier_changes(FindMetric("roce_netdev_carrier_changes_total"));
  for (const DeviceSnapshot& snap : snapshot.devices) {
    if (!snap.device) continue;
    const Device& d = *snap.device;
    const std::string_view role = DeviceRoleName(d.role);
    const std::string_view pci = d.pci_address;
    netdev_info.Add({d.name, d.driver, pci, role, OperStateName(d.oper_state), d.master}, 1);
    if (d.carrier_changes) carrier_changes.Add({d.name}, *d.carrier_changes);
    for (const RdmaPort& port : d.rdma_ports) {
      device_info.Add({port.device, std::to_string(port.port), d.name, pci, role,
                       PortStateName(port.port_state)},
                      1);
    }
  }
  netdev_info.AppendTo(out);
  device_info.AppendTo(out);
  carrier_changes.AppendTo(out);
}

}  // namespace roceqos
