#pragma once

// `roce_qos_exporter check`: a one-shot report of every selected device against its policy,
// field by field (expected, actual, why it matters), for cron, CI and `kubectl exec`. It
// replaces the manual checklist (`mlnx_qos -i X`, `cat .../ecn/roce_np/enable/3`,
// `sysctl net.ipv4.tcp_ecn`, `cat .../tc/1/traffic_class`, ...).

#include <iosfwd>
#include <string>
#include <vector>

#include "collectors/device.h"
#include "collectors/discovery.h"
#include "collectors/host.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/policy.h"
#include "exporter/qos/qos_io.h"

namespace roceqos {

/// Exit codes (documented in docs/policy.md).
inline constexpr int kCheckInSync = 0;  // every checked field of every device matches
inline constexpr int kCheckDrift = 1;   // at least one field differs or is absent
inline constexpr int kCheckError = 2;   // bad policy, discovery failure, or unreadable fields only

struct CheckOptions {
  std::string config_path;           // empty: the embedded default policy
  std::vector<std::string> netdevs;  // empty: the exporter's default device selection
  HostPaths paths;
  bool configfs_tos = false;  // --qos.configfs-tos
  bool color = false;         // ANSI colours (a terminal)
};

struct CheckDevice {
  Device device;
  ObservedQos observed;
};

/// Renders the report for already-read devices and returns the exit code. Pure: tests feed it.
int RenderCheckReport(const PolicySet& policy, const std::vector<CheckDevice>& devices, bool color,
                      std::ostream& out);

/// Chooses the devices to check: the named ones (an unknown name is an Error), or the default
/// selection (Mellanox PFs and netdevs bound to an RDMA port).
Result<std::vector<Device>> SelectCheckDevices(const Inventory& inventory,
                                               const std::vector<std::string>& netdevs);

/// The whole subcommand against the kernel: load the policy, discover, read, report.
int RunCheck(const CheckOptions& options, std::ostream& out, std::ostream& err);

/// The same with injected sources (tests).
int RunCheckWith(const CheckOptions& options, const Result<Inventory>& inventory, QosReader& reader,
                 std::ostream& out, std::ostream& err);

/// `policy show-default`: the embedded default policy as YAML; `--config` accepts it back.
int RunPolicyShowDefault(std::ostream& out);

}  // namespace roceqos
