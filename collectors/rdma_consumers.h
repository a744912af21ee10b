#pragma once

// The I/O behind "who uses each RDMA device" (docs/attribution.md): restrack's QP dump of one
// device over a NETLINK_RDMA socket of its own, and the owner of a PID from
// <proc>/PID/cgroup. The parsers are collectors/rdma_resources.h and collectors/cgroup_owner.h.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "collectors/cgroup_owner.h"
#include "collectors/netlink/socket.h"
#include "collectors/rdma_resources.h"

namespace roceqos {

class RdmaQpDumper {
 public:
  /// Opens a NETLINK_RDMA socket (EPROTONOSUPPORT: no RDMA netlink in this kernel).
  static Result<std::unique_ptr<RdmaQpDumper>> Open(const netlink::SocketOptions& options = {});
  virtual ~RdmaQpDumper() = default;

  /// One RDMA_NLDEV_CMD_RES_QP_GET dump of device `device_index` folded into `tally` (one kernel
  /// round trip, however many messages the dump spans). ENODEV: the device was unregistered.
  virtual Result<void> DumpQps(uint32_t device_index, RdmaQpTally& tally) = 0;
  /// The device's number of ports (RDMA_NLDEV_CMD_GET doit, RDMA_NLDEV_ATTR_PORT_INDEX). Fixed
  /// for the device's life, and the kernel never reuses a device index: callers cache it.
  virtual Result<uint32_t> PortCount(uint32_t device_index) = 0;
};

/// The owner of `pid` from `<proc_root>/<pid>/cgroup` (one read of at most kMaxProcCgroupBytes).
/// nullopt when the process is gone (ENOENT, ESRCH: it exited since the dump): absent, not
/// failed. An Error for another read failure or a text ParseCgroupOwner refuses.
Result<std::optional<CgroupOwner>> ReadProcCgroupOwner(const std::string& proc_root, uint32_t pid);

}  // namespace roceqos
