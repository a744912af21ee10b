// RDMA port hw counters from RDMA_NLDEV_CMD_STAT_GET.

#include <optional>
#include <string>

#include "collectors/rdma.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {

void RenderRdmaCounters(const Snapshot& snapshot, MetricSink& out) {
  FamilyBuilder cnp_sent(FindMetric("roce_cnp_sent_total"));
  FamilyBuilder cnp_handled(FindMetric("roce_cnp_handled_total"));
  FamilyBuilder cnp_ignored(FindMetric("roce_cnp_ignored_total"));
  FamilyBuilder ecn_marked(FindMetric("roce_ecn_marked_packets_total"));
  FamilyBuilder other(FindMetric("roce_rdma_hw_stat_total"));

  for (const DeviceSnapshot& device : snapshot.devices) {
    for (const RdmaPortSample& port : device.rdma) {
      if (!port.counters.names) continue;
      const std::vector<std::string>& names = *port.counters.names;
      const std::vector<uint64_t>& values = port.counters.values;
      const std::string port_label = std::to_string(port.port.port);
      const std::string_view rdma_device = port.port.device;
      for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
        const std::string_view name = names[i];
        const double v = static_cast<double>(values[i]);
        const std::optional<RdmaCongestionCounter> congestion =
            ValueOf(kRdmaCongestionCounterNames, name);
        if (!congestion) {
          other.Add({rdma_device, port_label, name}, v);
          continue;
        }
        switch (*congestion) {
          case RdmaCongestionCounter::kNpCnpSent:
            cnp_sent.Add({rdma_device, port_label}, v);
            break;
          case RdmaCongestionCounter::kRpCnpHandled:
            cnp_handled.Add({rdma_device, port_label}, v);
            break;
          case RdmaCongestionCounter::kRpCnpIgnored:
            cnp_ignored.Add({rdma_device, port_label}, v);
            break;
          case RdmaCongestionCounter::kNpEcnMarkedRocePackets:
            ecn_marked.Add({rdma_device, port_label}, v);
            break;
        }
      }
    }
  }
  for (FamilyBuilder* f : {&cnp_sent, &cnp_handled, &cnp_ignored, &ecn_marked, &other}) {
    f->AppendTo(out);
  }
}

}  // namespace roceqos
