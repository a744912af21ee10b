#pragma once

// Remediation planning: the writes that bring a device back to its policy, from plain values
// (ObservedQos, DeviceDrift), so tests need no kernel. Reference: docs/remediation.md.

#include <cstdint>
#include <string>
#include <vector>

#include "collectors/dcb.h"
#include "collectors/dcb_writer.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/policy.h"

namespace roceqos {

/// One write. DCB writes go through RTM_SETDCB; the rest are sysfs/procfs writes.
struct RemediationAction {
  enum class Kind : uint8_t {
    kDcbSet,
    /// DCB_ATTR_DCB_BUFFER alone, built from a read taken just before it is sent: a PFC change
    /// resizes mlx5's port buffers, and sizes from the read before it would be forced back
    /// (mlx5e_dcbnl_setbuffer switches to manual mode when they differ).
    kDcbSetBuffer,
    kDcbDeleteApps,
    kDcqcnEnable,
    kTcpEcn,
    kRoceTos,
    kDcqcnParam,  // one ecn/roce_{np,rp}/<param> file (CNP marking, DCQCN parameters)
  };
  QosField field = QosField::kPfc;
  Kind kind = Kind::kDcbSet;
  DcbWrite dcb;  // kDcbSet: the parts to set; kDcbDeleteApps: dcb.apps to delete
  std::optional<BufferPolicy> buffer;  // kDcbSetBuffer: the policy's buffer
  bool np = false;                     // kDcqcnEnable: notification (true) or reaction point
  int prio = 0;                        // kDcqcnEnable
  bool enable = false;
  int value = 0;             // kTcpEcn, kRoceTos
  std::string rdma_device;   // kRoceTos
  uint32_t port = 0;         // kRoceTos
  std::string param;         // kDcqcnParam: file name under ecn/roce_np (np) or ecn/roce_rp
  uint64_t param_value = 0;  // kDcqcnParam
  std::string old_value;     // for the audit log
  std::string new_value;
  std::string side_effect;  // disruption the write causes, logged before it is made
};

/// The writes that bring `observed` to `policy` for the drifted fields, in execution order (the
/// WriteStep each field's row names, qos_fields.h): ETS (prio_tc/ets), PFC, buffer, new DSCP APP
/// entries, then the deletion of entries they replace (add before delete, as `dcb app replace`
/// does), then DCQCN (enables, CNP marking, parameters), ToS and tcp_ecn. Fields that are absent,
/// unreadable, or not Remediable() get no action.
std::vector<RemediationAction> PlanRemediation(const QosPolicy& policy, const ObservedQos& observed,
                                               const DeviceDrift& drift);

/// The buffer to send for a kDcbSetBuffer action, from a read of the device taken now: the
/// policy's priority map and sizes where it sets them, the device's current sizes elsewhere.
BufferState BufferToSend(const BufferPolicy& policy, const BufferState& now);

/// Whether PlanRemediation can ever write this field (FieldSpec(field).Remediable()). The MTU and
/// the link facts (speed, VF count) are observe only: changing them takes the link or the VFs
/// down under running jobs.
bool Remediable(QosField field);

/// "<field>: <old> -> <new>" for logs and dry-run.
std::string DescribeAction(const RemediationAction& action);

/// Every remediable field the policy checks reads in sync: none drifted, absent or unreadable.
/// DeviceDrift::InSync() lets an absent field pass; ending a give-up needs this stricter proof.
bool FullyInSync(const DeviceDrift& drift);

}  // namespace roceqos
