#pragma once

// The QoS sources and sinks of one device behind small interfaces, so the daemon, the `check`
// subcommand and their tests share one reading path: DCB through DcbReader, the rest through
// HostReader and the GTUNABLE ioctl. The writes go through DcbWriter and HostWriter.

#include <memory>
#include <string>

#include "collectors/dcb.h"
#include "collectors/dcb_writer.h"
#include "collectors/dcqcn_params.h"
#include "collectors/device.h"
#include "collectors/host.h"
#include "collectors/host_writer.h"
#include "collectors/netlink/socket.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/qos_writer.h"

namespace roceqos {

class QosReader {
 public:
  virtual ~QosReader() = default;
  /// One IEEE_GET. Absent on EOPNOTSUPP (no dcbnl_ops), failed on any other error.
  virtual Observed<QosState> ReadDcb(const std::string& netdev) = 0;
  virtual DcqcnState ReadDcqcn(const std::string& netdev) = 0;
  virtual RoceTosState ReadRoceTos(const std::string& rdma_device, uint32_t port) = 0;
  virtual Observed<int> ReadTcpEcn() = 0;
  virtual Observed<uint16_t> ReadStormTimeout(const std::string& netdev) = 0;
  /// Link speed and SR-IOV VF count; a reader without them reports both absent.
  virtual LinkFacts ReadLinkFacts(const std::string& /*netdev*/) { return {}; }
  /// The DCQCN rate-control parameters (MOFED ecn/roce_{rp,np}/). The default is a host without
  /// MOFED (absent), so readers that model no MOFED sysfs need not override it.
  virtual Observed<DcqcnParams> ReadDcqcnParams(const std::string& /*netdev*/) {
    return Observed<DcqcnParams>::Absent();
  }
};

/// Reads every source of one device. `tcp_ecn` is host-wide: read once per poll by the caller.
ObservedQos ReadObservedQos(QosReader& reader, const Device& device, const Observed<int>& tcp_ecn);

/// Reads every source but the MOFED ecn/ tree (ECN enables, CNP marking, DCQCN parameters),
/// which it keeps from `previous`: each file there is a firmware command on mlx5
/// (QUERY_CONG_STATUS, QUERY_CONG_PARAMS), ~37 per netdev, so the engine reads them every
/// --qos.dcqcn-poll-interval.
ObservedQos ReadObservedQosKeepingDcqcn(QosReader& reader, const Device& device,
                                        const Observed<int>& tcp_ecn, const ObservedQos& previous);

/// Re-reads only DCB (the part a notification announces) and keeps the rest of `previous`.
ObservedQos RereadDcb(QosReader& reader, const Device& device, ObservedQos previous);

/// The kernel implementation: one NETLINK_ROUTE socket (not thread-safe: one per thread).
class KernelQosReader : public QosReader {
 public:
  static Result<std::unique_ptr<KernelQosReader>> Open(HostPaths paths, bool configfs_mkdir);

  Observed<QosState> ReadDcb(const std::string& netdev) override;
  DcqcnState ReadDcqcn(const std::string& netdev) override { return host_.ReadDcqcn(netdev); }
  RoceTosState ReadRoceTos(const std::string& rdma_device, uint32_t port) override {
    return host_.ReadRoceTos(rdma_device, port);
  }
  Observed<int> ReadTcpEcn() override { return host_.ReadTcpEcn(); }
  Observed<uint16_t> ReadStormTimeout(const std::string& netdev) override {
    return ReadPfcStormTimeout(netdev);
  }
  LinkFacts ReadLinkFacts(const std::string& netdev) override {
    return roceqos::ReadLinkFacts(host_.paths().sysfs, netdev);
  }
  Observed<DcqcnParams> ReadDcqcnParams(const std::string& netdev) override {
    return roceqos::ReadDcqcnParams(netdev, host_.paths());
  }

  netlink::Socket* socket() { return &socket_; }
  const HostReader& host() const { return host_; }

 private:
  KernelQosReader(netlink::Socket socket, HostPaths paths, bool configfs_mkdir);
  netlink::Socket socket_;
  DcbReader dcb_;
  HostReader host_;
};

/// Writes through the same socket and paths as a KernelQosReader.
class KernelQosWriter : public QosWriter {
 public:
  explicit KernelQosWriter(KernelQosReader* reader)
      : dcb_(reader->socket()), host_(reader->host().paths()) {}
  Result<void> SetDcb(const std::string& netdev, const DcbWrite& write) override;
  Result<void> DeleteDcbApps(const std::string& netdev, const std::vector<DcbApp>& apps) override;
  Result<void> WriteDcqcn(const std::string& netdev, bool np, int prio, bool enable) override;
  Result<void> WriteTcpEcn(int value) override;
  Result<void> WriteRoceTos(const std::string& rdma_device, uint32_t port, int tos) override;
  Result<void> WriteDcqcnParam(const std::string& netdev, bool np, const std::string& param,
                               uint64_t value) override;

 private:
  DcbWriter dcb_;
  HostWriter host_;
};

}  // namespace roceqos
