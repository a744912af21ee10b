#pragma once

// The signals layer's storm evidence as the QoS layer's guard (the two are siblings and do not
// include each other; the app wires them). A device is written only when its history shows no
// storm, never while one is possible but unseen (just started, counters reset, no derived
// signals): docs/signals.md "Storm guard".

#include "exporter/core/derived_signals.h"
#include "exporter/core/snapshot.h"
#include "exporter/qos/remediate.h"

namespace roceqos {

inline StormGuard StormGuardOf(const DeviceSnapshot& device) {
  if (!device.derived) return StormGuard::kUnknown;
  switch (device.derived->signals.storm_evidence) {
    case StormEvidence::kClear:
      return StormGuard::kClear;
    case StormEvidence::kStorm:
      return StormGuard::kStorm;
    case StormEvidence::kUnknown:
      break;
  }
  return StormGuard::kUnknown;
}

}  // namespace roceqos
