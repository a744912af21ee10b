#pragma once

// `roce_qos_exporter check`: a one-shot report of every selected device against its policy,
// field by field (expected, actual, why it matters), for cron, CI and `kubectl exec`. It
// replaces the manual checklist (`mlnx_qos -i X`, `cat .../ecn/roce_np/enable/3`,
// `sysctl net.ipv4.tcp_ecn`, `cat .../tc/1/traffic_class`, ...).

#include <iosfwd>
#include <optional>
#include <regex>
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
inline constexpr int kCheckDrift = 1;   // at least one field differs (absent fields are not drift)
inline constexpr int kCheckError = 2;   // bad policy, discovery failure, unreadable fields only,
                                        // or no device selected

/// The device selection, the same as the daemon's (exporter/sampling/device_selector.h).
struct CheckSelection {
  std::vector<std::string>
      netdevs;  // --netdev, repeatable; non-empty: exactly these (deduplicated)
  std::optional<std::regex> include;       // --collector.device-include (whole-name match)
  std::optional<std::regex> exclude;       // --collector.device-exclude
  std::string include_text, exclude_text;  // the patterns as given, for messages
};

struct CheckOptions {
  std::string config_path;  // empty: the embedded default policy
  CheckSelection selection;
  HostPaths paths;
  bool configfs_tos = false;  // --qos.configfs-tos
  bool color = false;         // ANSI colours (a terminal)
  bool json = false;          // --json: the schema in docs/check.md instead of text
};

/// One line of the validation checklist: a QoS policy field, or a check-only item (RDMA port
/// state). Status reuses the drift vocabulary: kAbsent = cannot be verified, kFailed = unreadable.
struct CheckItem {
  std::string item;  // "pfc", "rdma_port mlx5_0/1", ...
  FieldStatus status = FieldStatus::kInSync;
  std::string expected, actual, why;
};

/// Every checklist item of one device: the QoS fields its effective policy checks, then the state
/// of every bound RDMA port (ACTIVE expected).
std::vector<CheckItem> DeviceChecklist(const DeviceDrift& drift, const Device& device);

struct CheckDevice {
  Device device;
  ObservedQos observed;
};

/// Renders the report for already-read devices and returns the exit code. Pure: tests feed it.
int RenderCheckReport(const PolicySet& policy, const std::vector<CheckDevice>& devices, bool color,
                      std::ostream& out);

/// The same report as JSON (schema_version 1, docs/check.md). Pure: tests parse it.
int RenderCheckJson(const PolicySet& policy, const std::vector<CheckDevice>& devices,
                    std::ostream& out);

/// Chooses the devices to check: the named ones once each (an unknown name is an Error), or the
/// daemon's selection (include/exclude regexes, else Mellanox PFs and RDMA-bound netdevs).
Result<std::vector<Device>> SelectCheckDevices(const Inventory& inventory,
                                               const CheckSelection& selection);

/// The whole subcommand against the kernel: load the policy, discover, read, report.
int RunCheck(const CheckOptions& options, std::ostream& out, std::ostream& err);

/// The same with injected sources (tests).
int RunCheckWith(const CheckOptions& options, const Result<Inventory>& inventory, QosReader& reader,
                 std::ostream& out, std::ostream& err);

/// `policy show-default`: the embedded default policy as YAML; `--config` accepts it back.
int RunPolicyShowDefault(std::ostream& out);

}  // namespace roceqos
