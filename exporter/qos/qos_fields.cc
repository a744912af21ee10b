#include "exporter/qos/qos_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

#include "exporter/qos/drift_checks.h"

namespace roceqos {
namespace {

using Details = DcqcnParamVerdicts;

constexpr std::string_view kPfcSideEffect =
    "the link flaps on mlx5 (mlx5_toggle_port_link) and port buffers may be resized";
constexpr std::string_view kTrustSideEffect = "mlx5 may restart its channels";
constexpr std::string_view kRoceTosSideEffect =
    "running RC QPs are moved to the new class (RTS2RTS) where firmware allows";

// The DCB fields (read through RTM_GETDCB, written through RTM_SETDCB).
constexpr QosFieldSpec kTrustRow{
    .field = QosField::kTrust,
    .name = "trust",
    .policy_key = "trust",
    .source = "DCB apptrust, else any DSCP APP entry (selector 5)",
    .host_wide = false,
    .write_step = WriteStep::kApps,
    .side_effect = kTrustSideEffect,
    .checked = [](const QosPolicy& p) { return p.trust.has_value(); },
    .compare = [](const QosPolicy& p, const ObservedQos& o,
                  Details*) { return drift_check::Trust(*p.trust, o.dcb); }};

constexpr QosFieldSpec kPfcRow{.field = QosField::kPfc,
                               .name = "pfc",
                               .policy_key = "pfc",
                               .source = "DCB `ieee_pfc.pfc_en`",
                               .host_wide = false,
                               .write_step = WriteStep::kPfc,
                               .side_effect = kPfcSideEffect,
                               .checked = [](const QosPolicy& p) { return p.pfc.has_value(); },
                               .compare = [](const QosPolicy& p, const ObservedQos& o,
                                             Details*) { return drift_check::Pfc(*p.pfc, o.dcb); }};

constexpr QosFieldSpec kDscpPrioRow{
    .field = QosField::kDscpPrio,
    .name = "dscp_prio",
    .policy_key = "dscp_prio",
    .source = "DCB APP table, selector 5",
    .host_wide = false,
    .write_step = WriteStep::kApps,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.dscp_prio.has_value(); },
    .compare = [](const QosPolicy& p, const ObservedQos& o,
                  Details*) { return drift_check::DscpPrio(*p.dscp_prio, o.dcb); }};

constexpr QosFieldSpec kPrioTcRow{
    .field = QosField::kPrioTc,
    .name = "prio_tc",
    .policy_key = "prio_tc",
    .source = "DCB `ieee_ets.prio_tc`",
    .host_wide = false,
    .write_step = WriteStep::kEts,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.prio_tc.has_value(); },
    .compare = [](const QosPolicy& p, const ObservedQos& o,
                  Details*) { return drift_check::PrioTc(*p.prio_tc, o.dcb); }};

constexpr QosFieldSpec kEtsRow{.field = QosField::kEts,
                               .name = "ets",
                               .policy_key = "ets",
                               .source = "DCB `ieee_ets.tc_tsa`, `tc_tx_bw`",
                               .host_wide = false,
                               .write_step = WriteStep::kEts,
                               .side_effect = {},
                               .checked = [](const QosPolicy& p) { return p.ets.has_value(); },
                               .compare = [](const QosPolicy& p, const ObservedQos& o,
                                             Details*) { return drift_check::Ets(*p.ets, o.dcb); }};

constexpr QosFieldSpec kBufferRow{
    .field = QosField::kBuffer,
    .name = "buffer",
    .policy_key = "buffer",
    .source = "DCB `dcbnl_buffer`",
    .host_wide = false,
    .write_step = WriteStep::kBuffer,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.buffer.has_value(); },
    .compare = [](const QosPolicy& p, const ObservedQos& o,
                  Details*) { return drift_check::Buffer(*p.buffer, o.dcb); }};

// The RDMA and sysfs/procfs fields.
constexpr QosFieldSpec kRoceTosRow{
    .field = QosField::kRoceTos,
    .name = "roce_tos",
    .policy_key = "roce_tos",
    .source = "MOFED `traffic_class`, else rdma_cm configfs `default_roce_tos`",
    .host_wide = false,
    .write_step = WriteStep::kRoceTos,
    .side_effect = kRoceTosSideEffect,
    .checked = [](const QosPolicy& p) { return p.roce_tos.has_value(); },
    .compare = [](const QosPolicy& p, const ObservedQos& o,
                  Details*) { return drift_check::RoceTos(*p.roce_tos, o.roce_tos); }};

constexpr QosFieldSpec kDcqcnNpRow{
    .field = QosField::kDcqcnNp,
    .name = "dcqcn_np",
    .policy_key = "dcqcn.np",
    .source = "MOFED `ecn/roce_np/enable/<prio>`",
    .host_wide = false,
    .write_step = WriteStep::kDcqcnEnable,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.dcqcn_np.has_value(); },
    .compare =
        [](const QosPolicy& p, const ObservedQos& o, Details*) {
          return drift_check::Dcqcn(QosField::kDcqcnNp, *p.dcqcn_np, o.dcqcn.np_enabled);
        }};

constexpr QosFieldSpec kDcqcnRpRow{
    .field = QosField::kDcqcnRp,
    .name = "dcqcn_rp",
    .policy_key = "dcqcn.rp",
    .source = "MOFED `ecn/roce_rp/enable/<prio>`",
    .host_wide = false,
    .write_step = WriteStep::kDcqcnEnable,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.dcqcn_rp.has_value(); },
    .compare =
        [](const QosPolicy& p, const ObservedQos& o, Details*) {
          return drift_check::Dcqcn(QosField::kDcqcnRp, *p.dcqcn_rp, o.dcqcn.rp_enabled);
        }};

constexpr QosFieldSpec kTcpEcnRow{
    .field = QosField::kTcpEcn,
    .name = "tcp_ecn",
    .policy_key = "tcp_ecn",
    .source = "`/proc/sys/net/ipv4/tcp_ecn`",
    .host_wide = true,
    .write_step = WriteStep::kTcpEcn,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.tcp_ecn.has_value(); },
    .compare = [](const QosPolicy& p, const ObservedQos& o,
                  Details*) { return drift_check::TcpEcn(*p.tcp_ecn, o.tcp_ecn); }};

// Observe only: changing them takes the link or the VFs down under running jobs.
constexpr QosFieldSpec kMtuRow{.field = QosField::kMtu,
                               .name = "mtu",
                               .policy_key = "mtu",
                               .source = "the netdev MTU",
                               .host_wide = false,
                               .write_step = WriteStep::kNever,
                               .side_effect = {},
                               .checked = [](const QosPolicy& p) { return p.mtu.has_value(); },
                               .compare = [](const QosPolicy& p, const ObservedQos& o,
                                             Details*) { return drift_check::Mtu(*p.mtu, o.mtu); }};

constexpr QosFieldSpec kLinkSpeedMinRow{
    .field = QosField::kLinkSpeedMin,
    .name = "link_speed_min_mbps",
    .policy_key = "link_speed_min_mbps",
    .source = "`/sys/class/net/<if>/speed`",
    .host_wide = false,
    .write_step = WriteStep::kNever,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.link_speed_min_mbps.has_value(); },
    .compare =
        [](const QosPolicy& p, const ObservedQos& o, Details*) {
          return drift_check::LinkSpeed(*p.link_speed_min_mbps, o.link.speed_mbps);
        }};

constexpr QosFieldSpec kSriovNumVfsRow{
    .field = QosField::kSriovNumVfs,
    .name = "sriov_numvfs",
    .policy_key = "sriov_numvfs",
    .source = "`/sys/class/net/<if>/device/sriov_numvfs`",
    .host_wide = false,
    .write_step = WriteStep::kNever,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.sriov_numvfs.has_value(); },
    .compare =
        [](const QosPolicy& p, const ObservedQos& o, Details*) {
          return drift_check::SriovNumVfs(*p.sriov_numvfs, o.link.sriov_numvfs);
        }};

// CNP marking and the DCQCN parameters (MOFED ecn/ files).
constexpr QosFieldSpec kCnpDscpRow{
    .field = QosField::kCnpDscp,
    .name = "cnp_dscp",
    .policy_key = "cnp_dscp",
    .source = "MOFED `ecn/roce_np/cnp_dscp`",
    .host_wide = false,
    .write_step = WriteStep::kCnp,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.cnp_dscp.has_value(); },
    .compare =
        [](const QosPolicy& p, const ObservedQos& o, Details*) {
          return drift_check::Cnp(QosField::kCnpDscp, *p.cnp_dscp, o.dcqcn.cnp_dscp);
        }};

constexpr QosFieldSpec kCnpPrioRow{
    .field = QosField::kCnpPrio,
    .name = "cnp_802p_prio",
    .policy_key = "cnp_802p_prio",
    .source = "MOFED `ecn/roce_np/cnp_802p_prio`",
    .host_wide = false,
    .write_step = WriteStep::kCnp,
    .side_effect = {},
    .checked = [](const QosPolicy& p) { return p.cnp_802p_prio.has_value(); },
    .compare =
        [](const QosPolicy& p, const ObservedQos& o, Details*) {
          return drift_check::Cnp(QosField::kCnpPrio, *p.cnp_802p_prio, o.dcqcn.cnp_802p_prio);
        }};

constexpr QosFieldSpec kDcqcnParamsRow{
    .field = QosField::kDcqcnParams,
    .name = "dcqcn_params",
    .policy_key = "dcqcn_params",
    .source = "MOFED `ecn/roce_rp/<name>`, `ecn/roce_np/<name>`",
    .host_wide = false,
    .write_step = WriteStep::kDcqcnParams,
    .side_effect = {},
    .checked =
        [](const QosPolicy& p) { return !p.dcqcn_rp_params.empty() || !p.dcqcn_np_params.empty(); },
    .compare =
        [](const QosPolicy& p, const ObservedQos& o, Details* details) {
          return drift_check::DcqcnParams(p, o.dcqcn_params, details);
        }};

constexpr QosFieldSpec kFields[] = {kTrustRow,       kPfcRow,     kDscpPrioRow, kPrioTcRow,
                                    kEtsRow,         kBufferRow,  kRoceTosRow,  kDcqcnNpRow,
                                    kDcqcnRpRow,     kTcpEcnRow,  kMtuRow,      kLinkSpeedMinRow,
                                    kSriovNumVfsRow, kCnpDscpRow, kCnpPrioRow,  kDcqcnParamsRow};

// FieldSpec indexes the table by the enum: row i must be field i, and every field has a row.
constexpr bool RowsInEnumOrder() {
  if (std::size(kFields) != std::size(kAllQosFields)) return false;
  for (size_t i = 0; i < std::size(kFields); ++i)
    if (kFields[i].field != kAllQosFields[i] || static_cast<size_t>(kFields[i].field) != i)
      return false;
  return true;
}
static_assert(RowsInEnumOrder(), "kFields must hold one row per QosField, in enum order");

// The top-level keys, each once ("dcqcn.np" and "dcqcn.rp" share "dcqcn").
std::vector<std::string_view> TopLevelKeys() {
  std::vector<std::string_view> keys;
  for (const QosFieldSpec& spec : kFields) {
    std::string_view key = spec.policy_key.substr(0, spec.policy_key.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return keys;
}

// How each plan step writes, for the docs table.
constexpr std::string_view kWriteStepText[] = {
    "`IEEE_SET` `ieee_ets`",
    "`IEEE_SET` `ieee_pfc`",
    "`IEEE_SET` `dcbnl_buffer`",
    "`IEEE_SET`/`IEEE_DEL` of DSCP APP entries",
    "`1` into `ecn/roce_{np,rp}/enable/<prio>`",
    "the `ecn/roce_np/` file",
    "each drifted `ecn/roce_{rp,np}/<name>`",
    "MOFED `traffic_class`",
    "`/proc/sys/net/ipv4/tcp_ecn`",
    "never (observe only)",
};
static_assert(std::size(kWriteStepText) == kNumWriteSteps + 1);

}  // namespace

std::span<const QosFieldSpec> QosFieldTable() { return kFields; }

const QosFieldSpec& FieldSpec(QosField field) { return kFields[static_cast<size_t>(field)]; }

std::optional<QosField> QosFieldByName(std::string_view name) {
  for (const QosFieldSpec& spec : kFields)
    if (spec.name == name) return spec.field;
  return std::nullopt;
}

const std::vector<std::string_view>& PolicyKeys() {
  static const std::vector<std::string_view> keys = TopLevelKeys();
  return keys;
}

std::string QosFieldsDocTable() {
  std::string t =
      "| field (`field` label) | policy key | read from | scope | written by enforce | side "
      "effect of a write |\n|---|---|---|---|---|---|\n";
  for (const QosFieldSpec& s : kFields)
    t += fmt::format("| `{}` | `{}` | {} | {} | {} | {} |\n", s.name, s.policy_key, s.source,
                     s.host_wide ? "host" : "device",
                     kWriteStepText[static_cast<size_t>(s.write_step)],
                     s.side_effect.empty() ? "-" : s.side_effect);
  return t;
}

}  // namespace roceqos
