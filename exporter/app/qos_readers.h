#pragma once

// The daemon's QoS readers and writer, opened from one place so every one of them sees the same
// host paths: the sampler's reader and the remediation worker's reader and writer must read and
// write the same tcp_ecn (--path.procfs; a Kubernetes pod's is /host/proc).

#include <memory>

#include "base/result.h"
#include "collectors/host.h"
#include "exporter/app/config.h"
#include "exporter/qos/qos_engine.h"
#include "exporter/qos/qos_io.h"

namespace roceqos {

/// The host paths every QoS reader and writer of this process uses.
HostPaths QosHostPaths(const Config& config);

/// The reader the QoS engine polls with (on the sampler's thread).
Result<std::unique_ptr<KernelQosReader>> OpenQosReader(const Config& config);

/// The remediation worker's reader and writer: its own netlink socket (the worker runs on its own
/// thread, and a socket is not shared across threads), the same host paths as OpenQosReader.
Result<QosIo> OpenRemediationIo(const Config& config);

}  // namespace roceqos
