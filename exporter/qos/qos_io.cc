#include "exporter/qos/qos_io.h"

#include <linux/netlink.h>
#include <spdlog/spdlog.h>

#include "base/log_event.h"

namespace roceqos {

namespace {

// `keep`: the MOFED ecn/ tree is taken from there instead of read.
ObservedQos Read(QosReader& reader, const Device& device, const Observed<int>& tcp_ecn,
                 const ObservedQos* keep) {
  ObservedQos o;
  o.dcb = reader.ReadDcb(device.name);
  o.dcqcn = keep ? keep->dcqcn : reader.ReadDcqcn(device.name);
  for (const auto& port : device.rdma_ports) {
    PortTos tos;
    tos.device = port.device;
    tos.port = port.port;
    tos.tos = reader.ReadRoceTos(port.device, port.port);
    o.roce_tos.push_back(std::move(tos));
  }
  o.tcp_ecn = tcp_ecn;
  o.mtu = device.mtu != 0 ? Observed<uint32_t>::Ok(device.mtu) : Observed<uint32_t>::Absent();
  o.link = reader.ReadLinkFacts(device.name);
  o.pfc_storm_timeout_ms = reader.ReadStormTimeout(device.name);
  o.dcqcn_params = keep ? keep->dcqcn_params : reader.ReadDcqcnParams(device.name);
  return o;
}

}  // namespace

ObservedQos ReadObservedQos(QosReader& reader, const Device& device, const Observed<int>& tcp_ecn) {
  return Read(reader, device, tcp_ecn, nullptr);
}

ObservedQos ReadObservedQosKeepingDcqcn(QosReader& reader, const Device& device,
                                        const Observed<int>& tcp_ecn, const ObservedQos& previous) {
  return Read(reader, device, tcp_ecn, &previous);
}

ObservedQos RereadDcb(QosReader& reader, const Device& device, ObservedQos previous) {
  previous.dcb = reader.ReadDcb(device.name);
  if (device.mtu != 0) previous.mtu = Observed<uint32_t>::Ok(device.mtu);
  return previous;
}

Result<std::unique_ptr<KernelQosReader>> KernelQosReader::Open(HostPaths paths,
                                                               bool configfs_mkdir) {
  auto socket = netlink::Socket::Open(NETLINK_ROUTE);
  if (!socket) return socket.error();
  std::unique_ptr<KernelQosReader> reader(
      new KernelQosReader(std::move(*socket), std::move(paths), configfs_mkdir));
  if (configfs_mkdir) {
    // Recovery from a kill between our mkdir and rmdir of rdma_cm/<dev> (collectors/host.h).
    for (const std::string& device : reader->host_.RemoveOrphanConfigfsGroups())
      LogEvent(spdlog::level::warn,
               "--qos.configfs-tos: removed an rdma_cm configfs group that a killed process "
               "created and could not remove",
               {{"rdma_device", device}});
  }
  return reader;
}

KernelQosReader::KernelQosReader(netlink::Socket socket, HostPaths paths, bool configfs_mkdir)
    : socket_(std::move(socket)), dcb_(&socket_), host_(std::move(paths), configfs_mkdir) {}

Observed<QosState> KernelQosReader::ReadDcb(const std::string& netdev) {
  auto state = dcb_.Read(netdev);
  if (!state) return Observed<QosState>::Failed(state.error().message, state.error().errnum);
  if (!state->has_value()) return Observed<QosState>::Absent();
  return Observed<QosState>::Ok(std::move(**state));
}

Result<void> KernelQosWriter::SetDcb(const std::string& netdev, const DcbWrite& write) {
  return dcb_.Set(netdev, write);
}

Result<void> KernelQosWriter::DeleteDcbApps(const std::string& netdev,
                                            const std::vector<DcbApp>& apps) {
  return dcb_.DeleteApps(netdev, apps);
}

Result<void> KernelQosWriter::WriteDcqcn(const std::string& netdev, bool np, int prio,
                                         bool enable) {
  return host_.WriteDcqcnEnable(netdev, np, prio, enable);
}

Result<void> KernelQosWriter::WriteTcpEcn(int value) { return host_.WriteTcpEcn(value); }

Result<void> KernelQosWriter::WriteRoceTos(const std::string& rdma_device, uint32_t port, int tos) {
  return host_.WriteMofedTrafficClass(rdma_device, port, tos);
}

Result<void> KernelQosWriter::WriteDcqcnParam(const std::string& netdev, bool np,
                                              const std::string& param, uint64_t value) {
  return host_.WriteDcqcnParam(netdev, np, param, value);
}

}  // namespace roceqos
