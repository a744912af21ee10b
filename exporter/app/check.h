#pragma once

// `roce_qos_exporter check`: a one-shot report of every selected device against its policy,
// field by field (expected, actual, why it matters), for cron, CI and `kubectl exec`. It
// replaces the manual checklist (`mlnx_qos -i X`, `cat .../ecn/roce_np/enable/3`,
// `sysctl net.ipv4.tcp_ecn`, `cat .../tc/1/traffic_class`, ...).

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "collectors/device.h"
#include "collectors/discovery.h"
#include "collectors/host.h"
#include "collectors/lldp/lldpd_client.h"
#include "exporter/core/lldp_state.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/policy.h"
#include "exporter/qos/qos_io.h"
#include "exporter/qos/roce_port.h"

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
  /// The policy's YAML (a capture bundle's, --replay), named config_path; unset: read the file.
  std::optional<std::string> policy_yaml;
  CheckSelection selection;
  HostPaths paths;
  bool configfs_tos = false;  // --qos.configfs-tos
  bool color = false;         // ANSI colours (a terminal)
  bool json = false;          // --json: the schema in docs/check.md instead of text
  bool lldp = false;          // ask lldpd for the switch items (off under --replay, capture)
  lldp::LldpdQuery lldp_query;
  bool gids = false;  // the RoCE v2 GID items (off under --replay, capture, --gids.interval=0)
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
  /// The switch items (SwitchChecklist), after the policy's; empty when LLDP is not asked.
  std::vector<CheckItem> switch_items;
  /// The RoCE v2 GID items (exporter/app/check_gids.h), after the switch's; empty when the GIDs
  /// are not asked (--replay, capture, tests without a GidLookup).
  std::vector<CheckItem> gid_items;
  /// The port's RoCE counters (exporter/qos/roce_port.h): whether the defaults check it. Unknown
  /// (not read) counts as "RoCE cannot be ruled out": the port is checked.
  RoceTraffic traffic{};
};

/// The switch port's items of one device: "switch" (the neighbour itself: the cabling line),
/// then "switch pfc", "switch dscp_prio", "switch mtu" (exporter/qos/switch_compare.h). Without a
/// neighbour all four are unverified with the reason; none at all when lldpd is not installed or
/// not running (the node does not use LLDP).
std::vector<CheckItem> SwitchChecklist(const LldpState& lldp, const Device& device,
                                       const ObservedQos& observed);

/// Asks lldpd about `netdevs` once (what RunCheck does with CheckOptions::lldp).
using LldpLookup = std::function<LldpState(const std::vector<std::string>& netdevs)>;

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

/// A device's RoCE counters, read once (RunCheck reads the kernel's: one ETHTOOL_GSTATS and one
/// RDMA_NLDEV_CMD_STAT_GET per bound port, as the daemon's sampler does).
using TrafficLookup = std::function<RoceTraffic(const Device& device)>;

/// The RoCE v2 GID items of the selected devices (exporter/app/check_gids.h), by netdev: RunCheck
/// dumps the addresses once and reads the bound ports' GID tables, as the daemon's GID stage.
using GidLookup =
    std::function<std::map<std::string, std::vector<CheckItem>>(const std::vector<Device>&)>;

/// The same with injected sources (tests).
/// `lldp`: the switch items' source; none without it. `traffic`: the RoCE counters; without it
/// every device's traffic is unknown (so none is left unconfigured). `gids`: the GID items; none
/// without it.
int RunCheckWith(const CheckOptions& options, const Result<Inventory>& inventory, QosReader& reader,
                 std::ostream& out, std::ostream& err, const LldpLookup& lldp = {},
                 const TrafficLookup& traffic = {}, const GidLookup& gids = {});

/// `policy show-default`: the embedded default policy as YAML; `--config` accepts it back.
int RunPolicyShowDefault(std::ostream& out);

}  // namespace roceqos
