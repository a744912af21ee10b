#pragma once

// The QoS engine as a sample stage: runs on the sampler thread after the counters of a sample,
// fills DeviceSnapshot::qos and Snapshot::qos. Add it after the DeriveStage (exporter/signals) so
// the storm state of the same sample guards remediation, through the StormProbe.

#include <functional>
#include <memory>
#include <string_view>

#include "exporter/qos/qos_engine.h"
#include "exporter/sampling/sampler.h"

namespace roceqos {

class QosStage : public SampleStage {
 public:
  /// What the storm state machine says of a device, from what earlier stages put in the draft
  /// (DeviceSnapshot::derived). Without a probe every device is kUnknown: enforce never writes.
  using StormProbe = std::function<StormGuard(const DeviceSnapshot&)>;

  QosStage(QosEngine* engine, StormProbe storm = {}) : engine_(engine), storm_(std::move(storm)) {}

  std::string_view Source() const override { return "qos"; }
  void Run(StageContext& ctx, Snapshot& draft) override;

 private:
  QosEngine* engine_;
  StormProbe storm_;
};

}  // namespace roceqos
