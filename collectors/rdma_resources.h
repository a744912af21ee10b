#pragma once

// RDMA netlink resource tracking (restrack): who holds the QPs of each RDMA device
// (docs/kernel-interfaces.md §13). Pure parsers and request builders; the socket I/O is the
// caller's (RdmaCollector's socket or one of its own).
//
// The kernel answers RDMA_NLDEV_CMD_RES_QP_GET with one entry per QP; this module folds them into
// counts per owner while parsing, so no per-QP record outlives a reply message.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/result.h"
#include "collectors/netlink/attr.h"
#include "collectors/netlink/socket.h"

namespace roceqos {

/// RDMA_NLDEV_CMD_RES_QP_GET dump of one device. nldev's res_get_common_dumpit() answers -EINVAL
/// without RDMA_NLDEV_ATTR_DEV_INDEX, so the caller dumps device by device (iproute2's
/// `rdma resource show qp` does the same).
netlink::Message RdmaQpDumpRequest(uint32_t device_index);
/// RDMA_NLDEV_CMD_RES_GET dump: one summary message per RDMA device.
netlink::Message RdmaResourceSummaryDumpRequest();

/// Who a QP belongs to, as restrack reports it (fill_res_name_pid in drivers/infiniband/core/
/// nldev.c): a user process by PID, or a kernel consumer by its module name.
struct RdmaQpOwnerKey {
  uint32_t device_index = 0;  // RDMA_NLDEV_ATTR_DEV_INDEX
  uint32_t port = 0;          // RDMA_NLDEV_ATTR_PORT_INDEX; 0 = QP not yet bound to a port
  uint32_t pid = 0;           // RDMA_NLDEV_ATTR_RES_PID; 0 for kernel QPs and exiting processes
  std::string kern_name;      // RDMA_NLDEV_ATTR_RES_KERN_NAME; set only for kernel QPs

  bool operator==(const RdmaQpOwnerKey&) const = default;
  bool operator<(const RdmaQpOwnerKey& other) const {
    return std::tie(device_index, port, pid, kern_name) <
           std::tie(other.device_index, other.port, other.pid, other.kern_name);
  }
};

struct RdmaQpCount {
  uint32_t qps = 0;
  uint32_t qps_in_error = 0;  // RDMA_NLDEV_ATTR_RES_STATE == IB_QPS_ERR (6)

  bool operator==(const RdmaQpCount&) const = default;
};

/// Counts of QPs per owner over the messages of one dump round. Memory is bounded by the number
/// of distinct owners (processes and kernel modules holding QPs), not by the number of QPs.
class RdmaQpTally {
 public:
  /// Folds one RDMA_NLDEV_CMD_RES_QP_GET reply payload (the attributes after nlmsghdr; NLDEV has
  /// no family header) into the counts. A malformed message is an Error and adds nothing: the
  /// entries of a message are validated before any is counted.
  Result<void> AddQpReply(netlink::Bytes payload);

  const std::map<RdmaQpOwnerKey, RdmaQpCount>& owners() const { return owners_; }
  uint64_t total_qps() const { return total_qps_; }
  void Clear();

  /// Owners are capped: a dump naming more is counted in total_qps() and overflow_qps() only.
  static constexpr size_t kMaxOwners = 4096;
  uint64_t overflow_qps() const { return overflow_qps_; }

 private:
  std::map<RdmaQpOwnerKey, RdmaQpCount> owners_;
  uint64_t total_qps_ = 0;
  uint64_t overflow_qps_ = 0;
};

/// One RDMA_NLDEV_CMD_RES_GET reply: the current count of each restrack resource type of a device
/// ("qp", "cq", "pd", "mr", "cm_id", "ctx", "srq" on 6.x kernels).
struct RdmaResourceSummary {
  uint32_t device_index = 0;                              // RDMA_NLDEV_ATTR_DEV_INDEX
  std::string device;                                     // RDMA_NLDEV_ATTR_DEV_NAME
  std::vector<std::pair<std::string, uint64_t>> entries;  // kernel order

  bool operator==(const RdmaResourceSummary&) const = default;
};

/// Parses one RDMA_NLDEV_CMD_RES_GET reply payload. At most kMaxSummaryEntries entries are kept.
Result<RdmaResourceSummary> ParseRdmaResourceSummary(netlink::Bytes payload);
inline constexpr size_t kMaxSummaryEntries = 32;

}  // namespace roceqos
