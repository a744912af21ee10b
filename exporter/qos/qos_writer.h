#pragma once

// Where remediation's writes go: the sink beside QosReader (qos_io.h), so the readers and writers
// of one device share a header family without the remediation state machine. The kernel
// implementation (KernelQosWriter, qos_io.h) wraps DcbWriter and HostWriter; the write gate
// (write_gate.h) wraps any of them.

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "collectors/dcb.h"
#include "collectors/dcb_writer.h"

namespace roceqos {

class QosWriter {
 public:
  virtual ~QosWriter() = default;
  virtual Result<void> SetDcb(const std::string& netdev, const DcbWrite& write) = 0;
  virtual Result<void> DeleteDcbApps(const std::string& netdev,
                                     const std::vector<DcbApp>& apps) = 0;
  virtual Result<void> WriteDcqcn(const std::string& netdev, bool np, int prio, bool enable) = 0;
  virtual Result<void> WriteTcpEcn(int value) = 0;
  virtual Result<void> WriteRoceTos(const std::string& rdma_device, uint32_t port, int tos) = 0;
  /// ecn/roce_np/<param> (np) or ecn/roce_rp/<param>: CNP marking and DCQCN parameters.
  virtual Result<void> WriteDcqcnParam(const std::string& netdev, bool np, const std::string& param,
                                       uint64_t value) = 0;
};

}  // namespace roceqos
