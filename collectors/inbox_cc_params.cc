#include "collectors/inbox_cc_params.h"

#include <fmt/format.h>

#include "collectors/pci_function.h"
#include "collectors/sysfs_file.h"

namespace roceqos {
namespace {

constexpr DcqcnRole kRp = DcqcnRole::kReactionPoint;
constexpr DcqcnRole kNp = DcqcnRole::kNotificationPoint;

// mlx5_ib_dbg_cc_name[] against the fields of cong_control_r_roce_ecn_{rp,np} that
// mlx5_get_cc_param_val() returns, which MOFED's en_ecn.c exposes under these file names.
constexpr InboxCcParamName kNames[] = {
    {"rp_clamp_tgt_rate", kRp, "clamp_tgt_rate"},
    {"rp_clamp_tgt_rate_ati", kRp, "clamp_tgt_rate_after_time_inc"},
    {"rp_time_reset", kRp, "rpg_time_reset"},
    {"rp_byte_reset", kRp, "rpg_byte_reset"},
    {"rp_threshold", kRp, "rpg_threshold"},
    {"rp_ai_rate", kRp, "rpg_ai_rate"},
    {"rp_max_rate", kRp, "rpg_max_rate"},
    {"rp_hai_rate", kRp, "rpg_hai_rate"},
    {"rp_min_dec_fac", kRp, "rpg_min_dec_fac"},
    {"rp_min_rate", kRp, "rpg_min_rate"},
    {"rp_rate_to_set_on_first_cnp", kRp, "rate2set_fcnp"},
    {"rp_dce_tcp_g", kRp, "dce_tcp_g"},
    {"rp_dce_tcp_rtt", kRp, "dce_tcp_rtt"},
    {"rp_rate_reduce_monitor_period", kRp, "rreduce_mperiod"},
    {"rp_initial_alpha_value", kRp, "initial_alpha_value"},
    {"rp_gd", kRp, "rpg_gd"},
    {"np_min_time_between_cnps", kNp, "min_time_between_cnps"},
    {"np_cnp_dscp", kNp, "cnp_dscp"},
    // Writing np_cnp_prio also sets cnp_prio_mode 0 (mlx5_ib_set_cc_param_mask_val), so a written
    // CNP priority takes effect; cnp_prio_mode 1 sends each CNP on the priority of the packet
    // that triggered it.
    {"np_cnp_prio_mode", kNp, "cnp_prio_mode"},
    {"np_cnp_prio", kNp, "cnp_802p_prio"},
};

std::map<std::string, uint64_t>& RoleMap(DcqcnParams& params, DcqcnRole role) {
  return role == kRp ? params.reaction_point : params.notification_point;
}

}  // namespace

std::span<const InboxCcParamName> InboxCcParamNames() { return kNames; }

std::optional<std::string_view> InboxCcParamFile(DcqcnRole role, std::string_view mofed_name) {
  for (const InboxCcParamName& n : kNames)
    if (n.role == role && n.mofed == mofed_name) return n.debugfs;
  return std::nullopt;
}

std::optional<std::string> InboxCcParamsDir(const HostPaths& paths, std::string_view netdev) {
  if (paths.debugfs.empty()) return std::nullopt;
  std::optional<std::string> pci = NetdevPciAddress(paths.sysfs, netdev);
  if (!pci || !IsPciAddress(*pci)) return std::nullopt;  // the name must not leave mlx5/
  // mlx5_ib_init_cong_debugfs(): "cc_params" under mlx5_debugfs_get_dev_root(), which
  // mlx5_core names after the function's pci_name().
  return fmt::format("{}/mlx5/{}/cc_params", paths.debugfs, *pci);
}

Observed<DcqcnParams> ReadInboxCcParams(const std::string& dir) {
  if (!IsDirectory(dir)) return Observed<DcqcnParams>::Absent();
  DcqcnParams params;
  params.source = DcqcnParamsSource::kInboxDebugfs;
  size_t read = 0;
  for (const InboxCcParamName& n : kNames) {
    const std::string path = fmt::format("{}/{}", dir, n.debugfs);
    FileRead file = ReadSmallFile(path);
    if (file.missing) continue;  // an older driver without it (rp_max_rate came in 5.7)
    if (!file.error.empty()) {
      params.errors.push_back(file.error);
      continue;
    }
    Result<uint64_t> value = ParseDcqcnParam(file.content);
    if (!value) {
      params.errors.push_back(fmt::format("{}: {}", path, value.error().message));
      continue;
    }
    RoleMap(params, n.role)[std::string(n.mofed)] = *value;
    ++read;
  }
  if (read == 0 && !params.errors.empty())
    return Observed<DcqcnParams>::Failed(params.errors.front());
  return Observed<DcqcnParams>::Ok(std::move(params));
}

}  // namespace roceqos
