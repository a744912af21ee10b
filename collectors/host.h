#pragma once

// Host-side QoS sources outside DCB: MOFED ECN/DCQCN sysfs, the RoCE ToS (MOFED traffic_class or
// upstream rdma_cm configfs), net.ipv4.tcp_ecn and the PFC storm-prevention tunable.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "base/observed.h"
#include "base/result.h"
#include "collectors/dcb.h"

namespace roceqos {

/// The two DCQCN roles of an mlx5 netdev (MOFED sysfs /sys/class/net/<if>/ecn/<role>/), named as
/// their directories; the `role` label of the DCQCN parameter families.
enum class DcqcnRole : uint8_t { kReactionPoint, kNotificationPoint };
inline constexpr EnumName<DcqcnRole> kDcqcnRoleNames[] = {
    {DcqcnRole::kReactionPoint, "roce_rp"},
    {DcqcnRole::kNotificationPoint, "roce_np"},
};
constexpr std::string_view DcqcnRoleName(DcqcnRole role) { return NameOf(kDcqcnRoleNames, role); }
constexpr DcqcnRole DcqcnRoleOf(bool np) {
  return np ? DcqcnRole::kNotificationPoint : DcqcnRole::kReactionPoint;
}

/// MOFED /sys/class/net/<if>/ecn/roce_{np,rp}/: DCQCN notification/reaction point per priority.
struct DcqcnState {
  std::array<Observed<bool>, kNumPriorities> np_enabled;  // ecn/roce_np/enable/<prio>
  std::array<Observed<bool>, kNumPriorities> rp_enabled;  // ecn/roce_rp/enable/<prio>
  Observed<uint8_t> cnp_dscp;                             // ecn/roce_np/cnp_dscp
  Observed<uint8_t> cnp_802p_prio;                        // ecn/roce_np/cnp_802p_prio

  bool operator==(const DcqcnState&) const = default;
};

/// The default RoCE ToS of one RDMA port, from whichever source this host has.
struct RoceTosState {
  /// MOFED /sys/class/infiniband/<dev>/tc/<port>/traffic_class: "Global tclass=<n>"; an empty
  /// file means "not set" and reads as ok with nullopt.
  Observed<std::optional<uint8_t>> mofed_tclass;
  /// Upstream /sys/kernel/config/rdma_cm/<dev>/ports/<port>/default_roce_tos (RDMA-CM only).
  Observed<uint8_t> configfs_tos;

  /// The effective value: the MOFED global tclass when set (it overrides per QP), else the
  /// rdma_cm default. Absent when neither source exists; failed if the preferred one failed.
  Observed<uint8_t> Effective() const;
  bool operator==(const RoceTosState&) const = default;
};

struct HostPaths {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
  std::string configfs = "/sys/kernel/config";
  /// Where debugfs is mounted, to read and write the inbox mlx5_ib driver's DCQCN cc_params
  /// (collectors/inbox_cc_params.h) where MOFED's ecn/ tree is absent. Empty: not read (the
  /// default: root only, not a stable ABI; --path.debugfs opts in).
  std::string debugfs;
  /// Where a marker names each rdma_cm configfs group this process created and has not removed
  /// yet (--qos.configfs-tos). The group's name must be the RDMA device's, so the marker, not
  /// the name, tells ours from an administrator's.
  std::string configfs_markers = "/run/roce-qos-exporter/configfs";
};

/// Reads host sources. Stateless apart from paths and the configfs permission, so one instance
/// can be shared by a thread; each call reads the files anew.
class HostReader {
 public:
  /// `configfs_mkdir`: reading default_roce_tos needs `mkdir rdma_cm/<dev>` (the group appears
  /// only then, as cma_roce_tos does); allowed only by --qos.configfs-tos. The directory is
  /// removed again when this reader created it.
  explicit HostReader(HostPaths paths = {}, bool configfs_mkdir = false)
      : paths_(std::move(paths)), configfs_mkdir_(configfs_mkdir) {}

  DcqcnState ReadDcqcn(std::string_view netdev) const;
  RoceTosState ReadRoceTos(std::string_view rdma_device, uint32_t port) const;
  Observed<int> ReadTcpEcn() const;  // /proc/sys/net/ipv4/tcp_ecn: 0, 1 or 2

  const HostPaths& paths() const { return paths_; }

  /// Start-up recovery for --qos.configfs-tos: a process killed between its mkdir and rmdir of
  /// rdma_cm/<dev> left the group and its marker behind; removes both. Returns the groups
  /// removed. A group without a marker is never touched (it is not ours).
  std::vector<std::string> RemoveOrphanConfigfsGroups() const;

 private:
  HostPaths paths_;
  bool configfs_mkdir_;
};

/// ETHTOOL_GTUNABLE ETHTOOL_PFC_PREVENTION_TOUT (u16 ms; 0 = disabled, 0xffff = auto) through the
/// SIOCETHTOOL ioctl (no netlink message exists for tunables, §4.3). Absent on EOPNOTSUPP (no
/// pfcc_mask/stall_detect, veth).
Observed<uint16_t> ReadPfcStormTimeout(std::string_view netdev);

/// Parsers, exposed for tests. Each takes the file content and returns a clear error.
Result<bool> ParseEnableFlag(std::string_view content);               // "0\n" / "1\n"
Result<int> ParseSmallInt(std::string_view content, int lo, int hi);  // decimal in [lo, hi]
Result<std::optional<uint8_t>> ParseMofedTrafficClass(std::string_view content);

}  // namespace roceqos
