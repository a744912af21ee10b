#pragma once

// The QoS fields, one row each: the single place a field's name, policy key, scope, how it is
// compared and whether and how remediation writes it are stated. Drift (EvaluateDrift), the plan
// (PlanRemediation, Remediable), the policy parser's key list, the
// metrics and the docs table (docs/policy.md "Fields", checked by a unit test) iterate over it.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/core/qos_state.h"
#include "exporter/qos/policy.h"

namespace roceqos {

/// The plan steps, in the order PlanRemediation runs them: the DCB parts in the kernel's own
/// order (ETS, PFC, buffer, APP: one RTM_SETDCB), then the sysfs/procfs writes. A field names the
/// step that writes it; kNever marks an observe-only field.
enum class WriteStep : uint8_t {
  kEts,          // prio_tc and ets: one struct ieee_ets
  kPfc,          // struct ieee_pfc
  kBuffer,       // struct dcbnl_buffer, from a read taken after the PFC change
  kApps,         // DSCP APP entries (dscp_prio, and trust, which follows them on mlx5)
  kDcqcnEnable,  // ecn/roce_{np,rp}/enable/<prio>
  kCnp,          // ecn/roce_np/cnp_dscp, cnp_802p_prio
  kDcqcnParams,  // ecn/roce_{np,rp}/<param>
  kRoceTos,      // the MOFED traffic_class file
  kTcpEcn,       // /proc/sys/net/ipv4/tcp_ecn
  kNever,        // observe only
};
inline constexpr size_t kNumWriteSteps = static_cast<size_t>(WriteStep::kNever);

/// The per-parameter verdicts a comparison may add (only dcqcn_params does).
using DcqcnParamVerdicts = std::vector<DcqcnParamVerdict>;

struct QosFieldSpec {
  QosField field;
  std::string_view name;        // `field` label value, verdict and log name
  std::string_view policy_key;  // the key in a policy mapping; "dcqcn.np" is np under dcqcn
  std::string_view source;      // where the observation is read (docs)
  /// Host-wide (one value for the whole host, e.g. net.ipv4.tcp_ecn): only `defaults` may set
  /// it, and remediation charges its writes to the host, never to a device.
  bool host_wide = false;
  WriteStep write_step = WriteStep::kNever;
  /// The disruption a write causes, logged before it is made; empty when none is known.
  std::string_view side_effect;
  /// Whether the policy checks the field (false: no verdict, never written).
  bool (*checked)(const QosPolicy&) = nullptr;
  /// The verdict of a policy that checks the field against one observation.
  FieldVerdict (*compare)(const QosPolicy&, const ObservedQos&, DcqcnParamVerdicts*) = nullptr;

  /// Whether remediation ever writes the field.
  constexpr bool Remediable() const { return write_step != WriteStep::kNever; }
};

/// Every field, one row each, in QosField order (kAllQosFields).
std::span<const QosFieldSpec> QosFieldTable();
/// The row of `field`.
const QosFieldSpec& FieldSpec(QosField field);
/// The field whose name (`field` label value) is `name`.
std::optional<QosField> QosFieldByName(std::string_view name);
/// The top-level keys a policy mapping accepts, in table order ("dcqcn" once for np and rp).
const std::vector<std::string_view>& PolicyKeys();

/// The markdown table of the fields that docs/policy.md "Fields" holds, generated from the table.
std::string QosFieldsDocTable();

}  // namespace roceqos
