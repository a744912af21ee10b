#pragma once

// Which ports the policy's defaults check: RoCE ports only (docs/policy.md "RoCE ports"). The
// defaults apply to every Mellanox PF, but a ConnectX port at factory defaults that carries no
// RoCE (a storage or frontend port, an unused second port) would read drift in half its fields
// and page. Such a port is shown unconfigured instead, until it is configured or RoCE traffic
// moves on it. A RoCE port that a reboot or a driver reload took back to factory defaults is
// still one: the counters of the traffic that uses it, and the memory of this process, say so.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "collectors/device.h"
#include "exporter/core/qos_state.h"
#include "exporter/qos/policy.h"

namespace roceqos {

std::string_view RocePortReasonName(RocePortReason reason);  // the `reason` label value

/// What the RoCE counters of one port say. The counters count from the driver's load, so a
/// driver reload starts them at 0 again.
struct RoceTraffic {
  bool known = false;    // at least one counter source was read
  uint64_t packets = 0;  // the sum of the counters below that the port has
  std::string evidence;  // the first counter above zero, "name value"
};

/// The counters that move only with RoCE (docs/kernel-interfaces.md §3.3, §5.7, §6): mlx5's
/// ethtool vport counters `{rx,tx}_vport_rdma_{unicast,multicast}_packets`, mlx5_ib's responder
/// requests `rx_{write,read,atomic}_requests` and optional `rdma_{rx,tx}_packets`, and rxe's
/// `sent_pkts`/`rcvd_pkts`. Reads what the sampler already read: no kernel call. `ethtool` may be
/// null (no statistics, or the read failed); `rdma` holds the hw counters of each bound port read.
RoceTraffic RoceTrafficOf(const CounterSet* ethtool, std::span<const CounterSet* const> rdma);

/// What makes a port configured: not at the factory defaults of the lossless fields. PFC on any
/// priority, trust dscp, any DSCP APP entry, or a MOFED global traffic_class set. The text says
/// which ("pfc [3], trust dscp"); empty at factory defaults; nullopt when DCB cannot be read.
std::optional<std::string> ConfiguredEvidence(const ObservedQos& observed);

struct RocePortInput {
  std::string_view rule;  // the policy rule that chose the device's policy ("default", a name)
  RocePorts mode = RocePorts::kAuto;
  const ObservedQos* observed = nullptr;
  RoceTraffic traffic;
  /// Why this process already knows the port as a RoCE port (RocePortMemory); empty if not.
  std::string remembered;
};

/// The test, in order: a rule named the port; roce_ports: all; configured; RoCE traffic; known
/// earlier; a DCB read or a counter read failed (checked: a doubt never hides drift); else
/// unconfigured (kNoRoceTraffic). Only devices whose rule is "default" can be unconfigured.
RocePortClass ClassifyRocePort(const RocePortInput& input);

/// What this process has seen of each port (keyed by PCI function, DeviceIdentity, so a rename
/// or a driver reload keeps it): a port once configured, carrying RoCE or in sync stays a RoCE
/// port for the life of the process, and the last traffic reading stands in for a failed one.
class RocePortMemory {
 public:
  /// Records what an evaluation showed: the class and whether every known field was in sync.
  void Learn(const std::string& identity, const RocePortClass& port_class,
             const DeviceDrift& drift);
  /// Records a traffic reading (an unknown one is ignored).
  void NoteTraffic(const std::string& identity, const RoceTraffic& seen);
  /// Why the port is remembered ("in sync at ..."), or empty.
  std::string Remembered(const std::string& identity) const;
  /// `traffic`, or the last known reading of the port when this one is unknown.
  RoceTraffic WithLastKnown(const std::string& identity, RoceTraffic traffic) const;

 private:
  struct Port {
    std::string remembered;
    std::optional<RoceTraffic> last_traffic;
  };
  std::map<std::string, Port> ports_;
};

/// The human line for a class: "unconfigured: at factory defaults and no RoCE traffic ...".
std::string RocePortText(const RocePortClass& port_class);

}  // namespace roceqos
