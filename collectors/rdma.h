#pragma once

// RDMA netlink (NETLINK_RDMA): device/port inventory and per-port hw counters
// (docs/kernel-interfaces.md §5).

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/enum_names.h"
#include "base/result.h"
#include "collectors/device.h"
#include "collectors/netlink/attr.h"
#include "collectors/netlink/socket.h"

namespace roceqos {

// IB_DEVICE_NAME_MAX (include/rdma/ib_verbs.h) is 64 including the NUL: the bound of every
// RDMA_NLDEV_ATTR_DEV_NAME the RDMA netlink parsers accept.
inline constexpr uint16_t kIbDeviceNameMax = 64;

/// The mlx5 congestion counters (cong_cnts, docs/kernel-interfaces.md §5.7) that get families and
/// signals of their own; every other hw counter is exported by its name only.
enum class RdmaCongestionCounter : uint8_t {
  kNpCnpSent,
  kNpEcnMarkedRocePackets,
  kRpCnpHandled,
  kRpCnpIgnored,
};
/// Spelled as RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME reports them.
inline constexpr EnumName<RdmaCongestionCounter> kRdmaCongestionCounterNames[] = {
    {RdmaCongestionCounter::kNpCnpSent, "np_cnp_sent"},
    {RdmaCongestionCounter::kNpEcnMarkedRocePackets, "np_ecn_marked_roce_packets"},
    {RdmaCongestionCounter::kRpCnpHandled, "rp_cnp_handled"},
    {RdmaCongestionCounter::kRpCnpIgnored, "rp_cnp_ignored"},
};

/// One RDMA device from an RDMA_NLDEV_CMD_GET dump.
struct RdmaDevice {
  uint32_t index = 0;       // RDMA_NLDEV_ATTR_DEV_INDEX
  std::string name;         // RDMA_NLDEV_ATTR_DEV_NAME
  uint32_t port_count = 0;  // RDMA_NLDEV_ATTR_PORT_INDEX (on GET it is the number of ports)
  std::string protocol;     // RDMA_NLDEV_ATTR_DEV_PROTOCOL ("roce", "ib", "iw"); newer kernels

  bool operator==(const RdmaDevice&) const = default;
};

/// Parses an RDMA_NLDEV_CMD_STAT_GET reply payload (attributes after nlmsghdr; NLDEV has no
/// family header) into counters in kernel order. When `previous_names` holds exactly the names
/// of this reply, the result shares it instead of allocating a new vector (pass the names of the
/// port's previous sample).
Result<CounterSet> ParseRdmaStatReply(
    netlink::Bytes payload,
    const std::shared_ptr<const std::vector<std::string>>& previous_names = nullptr);

/// Parses one RDMA_NLDEV_CMD_PORT_GET reply payload into an RdmaPort (device name filled from
/// RDMA_NLDEV_ATTR_DEV_NAME; protocol is left empty: it comes from RDMA_NLDEV_CMD_GET).
Result<RdmaPort> ParseRdmaPortReply(netlink::Bytes payload);

/// The netlink message type of an RDMA_NLDEV_CMD_* request: RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op).
uint16_t RdmaNldevType(int op);

/// Parses one RDMA_NLDEV_CMD_GET reply payload.
Result<RdmaDevice> ParseRdmaDeviceReply(netlink::Bytes payload);

/// The counter names of each port's last sample, keyed by PortKey (device index, port), so an
/// unchanged kernel list is shared between samples instead of reallocated.
using PortNamesCache =
    std::unordered_map<uint64_t, std::shared_ptr<const std::vector<std::string>>>;
uint64_t PortKey(uint32_t device_index, uint32_t port);
/// Drops the entries of ports not in `present` (the last ListPorts()). The kernel never reuses an
/// RDMA device index (ib_device_rename keeps it, re-registering takes a new one), so without this
/// every device churn would leave an entry behind for the life of the process.
void ForgetAbsentPorts(PortNamesCache& cache, const std::vector<RdmaPort>& present);

class RdmaCollector {
 public:
  /// Opens a NETLINK_RDMA socket. An Error with errnum EPROTONOSUPPORT means the kernel has no
  /// RDMA netlink at all. Open() does not log: saying so once is the caller's job (Discovery
  /// does it once per process).
  static Result<std::unique_ptr<RdmaCollector>> Open(const netlink::SocketOptions& options = {});
  virtual ~RdmaCollector() = default;

  /// RDMA_NLDEV_CMD_GET dump (each device's protocol), then one RDMA_NLDEV_CMD_PORT_GET dump per
  /// device: every port of every RDMA device visible in this netns, with its netdev.
  virtual Result<std::vector<RdmaPort>> ListPorts() = 0;
  /// One RDMA_NLDEV_CMD_STAT_GET doit (DEV_INDEX + PORT_INDEX): the port's hw counters. The
  /// names vector is shared with the port's previous sample while the kernel's list is unchanged.
  virtual Result<CounterSet> ReadCounters(const RdmaPort& port) = 0;
};

}  // namespace roceqos
