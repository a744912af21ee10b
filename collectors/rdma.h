#pragma once

// RDMA netlink (NETLINK_RDMA): device/port inventory and per-port hw counters (reference §5).

#include <memory>
#include <vector>

#include "collectors/device.h"
#include "collectors/netlink/attr.h"
#include "collectors/result.h"

namespace roceqos {

/// Parses an RDMA_NLDEV_CMD_STAT_GET reply payload (attributes after nlmsghdr; NLDEV has no
/// family header) into counters in kernel order.
Result<CounterSet> ParseRdmaStatReply(netlink::Bytes payload);

/// Parses one RDMA_NLDEV_CMD_PORT_GET reply payload into an RdmaPort (device name filled from
/// RDMA_NLDEV_ATTR_DEV_NAME).
Result<RdmaPort> ParseRdmaPortReply(netlink::Bytes payload);

class RdmaCollector {
 public:
  /// Opens a NETLINK_RDMA socket. An Error with errnum EPROTONOSUPPORT means the kernel has no
  /// RDMA netlink at all (say so once, not at every sample).
  static Result<std::unique_ptr<RdmaCollector>> Open();
  virtual ~RdmaCollector() = default;

  /// RDMA_NLDEV_CMD_PORT_GET dump: every port of every RDMA device with its netdev.
  virtual Result<std::vector<RdmaPort>> ListPorts() = 0;
  /// One RDMA_NLDEV_CMD_STAT_GET doit (DEV_INDEX + PORT_INDEX): the port's hw counters.
  virtual Result<CounterSet> ReadCounters(const RdmaPort& port) = 0;
};

}  // namespace roceqos
