#include "exporter/app/qos_readers.h"

#include <utility>

namespace roceqos {

HostPaths QosHostPaths(const Config& config) {
  return HostPaths{.procfs = config.procfs_path, .debugfs = config.debugfs_path};
}

Result<std::unique_ptr<KernelQosReader>> OpenQosReader(const Config& config) {
  return KernelQosReader::Open(QosHostPaths(config), config.qos_configfs_tos);
}

Result<QosIo> OpenRemediationIo(const Config& config) {
  Result<std::unique_ptr<KernelQosReader>> reader = OpenQosReader(config);
  if (!reader) return reader.error();
  QosIo io;
  io.writer = std::make_unique<KernelQosWriter>(reader->get());
  io.reader = std::move(*reader);
  return io;
}

}  // namespace roceqos
