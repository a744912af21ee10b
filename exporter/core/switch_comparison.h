#pragma once

// One device against the switch port it is cabled to, as /metrics shows it
// (roce_qos_switch_mismatch, roce_qos_switch_frame_overhead_bytes). Computed into the snapshot
// when the LLDP state is attached (exporter/qos/switch_compare.h SwitchComparer), so the
// renderer only formats it, like the policy drift of QosDeviceState.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace roceqos {

struct SwitchFieldComparison {
  std::string_view field;  // SwitchFieldName (a static name): "pfc", "dscp_prio", "mtu"
  bool drift = false;      // false: in sync
};

/// The frame overhead the MTU was compared with.
struct SwitchFrameOverhead {
  std::string_view tagging;  // FrameTaggingName (a static name)
  uint32_t bytes = 0;
};

struct SwitchComparison {
  /// The comparable fields (both sides readable), in kSwitchFieldNames order.
  std::vector<SwitchFieldComparison> fields;
  std::optional<SwitchFrameOverhead> frame;  // set when the MTU was comparable
};

}  // namespace roceqos
