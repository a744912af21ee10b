#pragma once

// DCQCN algorithm parameters of one netdev from MOFED's sysfs (mlx5_core en_ecn.c layout):
// every file of /sys/class/net/<if>/ecn/roce_rp/ (reaction point: rpg_time_reset, rpg_ai_rate,
// initial_alpha_value, ...) and ecn/roce_np/ (notification point: min_time_between_cnps,
// cnp_dscp, cnp_802p_prio). The per-priority enable/<prio> files stay with HostReader::ReadDcqcn
// (collectors/host.h). Upstream mlx5 has no such files: its cc_params live in debugfs, read by
// collectors/inbox_cc_params.h only when the operator opts in (--path.debugfs).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/host.h"

namespace roceqos {

/// Which driver's files served the parameters (roce_qos_dcqcn_params_source).
enum class DcqcnParamsSource : uint8_t { kMofedSysfs, kInboxDebugfs };
inline constexpr EnumName<DcqcnParamsSource> kDcqcnParamsSourceNames[] = {
    {DcqcnParamsSource::kMofedSysfs, "mofed_sysfs"},
    {DcqcnParamsSource::kInboxDebugfs, "inbox_debugfs"},
};

struct DcqcnParams {
  std::map<std::string, uint64_t> reaction_point;      // ecn/roce_rp/<name>
  std::map<std::string, uint64_t> notification_point;  // ecn/roce_np/<name>
  /// "<path>: <reason>" for files that exist but could not be read or are not a decimal
  /// integer; the other files are still reported.
  std::vector<std::string> errors;
  DcqcnParamsSource source = DcqcnParamsSource::kMofedSysfs;

  bool operator==(const DcqcnParams&) const = default;
};

/// MOFED's <sysfs>/class/net/<netdev>/ecn tree; without it, the inbox driver's debugfs cc_params
/// when `paths.debugfs` is set (collectors/inbox_cc_params.h). Absent when neither exists
/// (upstream driver without the opt-in, VF, SF, another NIC); failed when the directory exists
/// but cannot be listed. Reads each file once per call (~20 small reads, each a firmware query
/// on mlx5: call it on the QoS poll cadence, not per sample).
Observed<DcqcnParams> ReadDcqcnParams(std::string_view netdev, const HostPaths& paths);

/// One parameter file's content: a decimal u64, surrounding whitespace allowed.
Result<uint64_t> ParseDcqcnParam(std::string_view content);

}  // namespace roceqos
