#include "collectors/rdma_consumers.h"

#include <fmt/format.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <utility>

#include "collectors/rdma.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

class NetlinkRdmaQpDumper final : public RdmaQpDumper {
 public:
  explicit NetlinkRdmaQpDumper(netlink::Socket socket) : socket_(std::move(socket)) {}

  Result<void> DumpQps(uint32_t device_index, RdmaQpTally& tally) override {
    netlink::Message request = RdmaQpDumpRequest(device_index);
    return socket_.Request(
        request, [&](const netlink::NlMessage& reply) { return tally.AddQpReply(reply.body); },
        fmt::format("RDMA_NLDEV_CMD_RES_QP_GET dump of device {}", device_index));
  }

  Result<uint32_t> PortCount(uint32_t device_index) override {
    // nldev_get_doit: fill_dev_info puts RDMA_NLDEV_ATTR_PORT_INDEX = rdma_end_port().
    netlink::Message request(RdmaNldevType(RDMA_NLDEV_CMD_GET), 0);
    request.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, device_index);
    std::optional<uint32_t> ports;
    Result<void> got = socket_.Request(
        request,
        [&](const netlink::NlMessage& reply) -> Result<void> {
          Result<RdmaDevice> device = ParseRdmaDeviceReply(reply.body);
          if (!device) return device.error();
          ports = device->port_count;
          return {};
        },
        fmt::format("RDMA_NLDEV_CMD_GET of device {}", device_index));
    if (!got) return got.error();
    if (!ports) return MakeError(EPROTO, "RDMA_NLDEV_CMD_GET: no reply");
    return *ports;
  }

 private:
  netlink::Socket socket_;
};

}  // namespace

Result<std::unique_ptr<RdmaQpDumper>> RdmaQpDumper::Open(const netlink::SocketOptions& options) {
  Result<netlink::Socket> socket = netlink::Socket::Open(NETLINK_RDMA, options);
  if (!socket) {
    Error error = socket.error();
    error.message = "RDMA netlink: " + error.message;
    return error;
  }
  return std::unique_ptr<RdmaQpDumper>(new NetlinkRdmaQpDumper(std::move(*socket)));
}

Result<std::optional<CgroupOwner>> ReadProcCgroupOwner(const std::string& proc_root, uint32_t pid) {
  // ReadSmallFile reads at most 64 KiB, kMaxProcCgroupBytes: a longer file is an Error there.
  static_assert(kMaxProcCgroupBytes == size_t{64} * 1024);
  const std::string path = fmt::format("{}/{}/cgroup", proc_root, pid);
  FileRead read = ReadSmallFile(path);
  // A process that exited after the dump: ENOENT at open, ESRCH from proc_cgroup_show() when the
  // task is gone between open and read.
  if (read.missing || read.errnum == ESRCH) return std::optional<CgroupOwner>{};
  if (!read.error.empty()) return MakeError(read.errnum, read.error);
  Result<CgroupOwner> owner = ParseCgroupOwner(read.content);
  if (!owner) return MakeError(0, fmt::format("{}: {}", path, owner.error().message));
  return std::optional<CgroupOwner>(std::move(*owner));
}

}  // namespace roceqos
