#pragma once

// The host-side QoS writes of remediation, beside the reads of collectors/host.h: the MOFED
// DCQCN sysfs files (or the inbox driver's cc_params), net.ipv4.tcp_ecn and the MOFED global
// tclass. Only exporter/qos's write path uses them.

#include <cstdint>
#include <string_view>
#include <utility>

#include "base/result.h"
#include "collectors/host.h"

namespace roceqos {

/// Writes host sources under the same paths a HostReader reads. Stateless apart from its paths;
/// a replay (collectors/capture/tape.h) refuses every write.
class HostWriter {
 public:
  explicit HostWriter(HostPaths paths = {}) : paths_(std::move(paths)) {}

  /// Writes "0"/"1" to ecn/roce_{np,rp}/enable/<prio>. Needs root.
  Result<void> WriteDcqcnEnable(std::string_view netdev, bool np, int prio, bool enable) const;
  /// Writes one DCQCN parameter file, ecn/roce_{np,rp}/<name> (cnp_dscp, rpg_ai_rate, ...), as
  /// a decimal. `name` must be a plain file name. Needs root.
  Result<void> WriteDcqcnParam(std::string_view netdev, bool np, std::string_view name,
                               uint64_t value) const;
  /// Writes /proc/sys/net/ipv4/tcp_ecn.
  Result<void> WriteTcpEcn(int value) const;
  /// Writes the MOFED global tclass (/sys/class/infiniband/<dev>/tc/<port>/traffic_class).
  Result<void> WriteMofedTrafficClass(std::string_view rdma_device, uint32_t port, int tos) const;

 private:
  HostPaths paths_;
};

}  // namespace roceqos
