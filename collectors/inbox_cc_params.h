#pragma once

// The inbox (upstream) mlx5_ib driver's DCQCN parameters: debugfs
// <debugfs>/mlx5/<pci>/cc_params/<name> (drivers/infiniband/hw/mlx5/cong.c,
// mlx5_ib_dbg_cc_name[]; docs/kernel-interfaces.md §7.4). Each file is one firmware command
// (QUERY_CONG_PARAMS to read, MODIFY_CONG_PARAMS to write), mode 0600: root and a mounted debugfs.
// The values are reported under MOFED's ecn/roce_{rp,np}/ names, so one policy key names one
// parameter whichever driver serves it.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "collectors/dcqcn_params.h"
#include "collectors/host.h"

namespace roceqos {

struct InboxCcParamName {
  std::string_view debugfs;  // mlx5_ib_dbg_cc_name[i]
  DcqcnRole role;
  std::string_view mofed;  // the same parameter's file under MOFED's ecn/roce_{rp,np}/
};

/// Every parameter of mlx5_ib_dbg_cc_name[] that MOFED also has; rtt_resp_dscp{,_valid} (the
/// "general" congestion node) has no MOFED counterpart and is not read.
std::span<const InboxCcParamName> InboxCcParamNames();

/// The debugfs file of a MOFED-named parameter, nullopt when the inbox driver has none.
std::optional<std::string_view> InboxCcParamFile(DcqcnRole role, std::string_view mofed_name);

/// <debugfs>/mlx5/<pci>/cc_params of `netdev`'s PCI function. nullopt when `debugfs` is empty
/// (not opted in: --path.debugfs) or the netdev is not a PCI function.
std::optional<std::string> InboxCcParamsDir(const HostPaths& paths, std::string_view netdev);

/// Reads every known file of `dir`. Absent when `dir` is not a directory (MOFED, another driver,
/// debugfs not mounted or not ours to enter: an unprivileged observer); failed when no file could
/// be read; a file that fails or does not parse is listed in `errors`.
Observed<DcqcnParams> ReadInboxCcParams(const std::string& dir);

}  // namespace roceqos
