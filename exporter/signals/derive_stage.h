#pragma once

// The sampler stage that runs the derivation (derive.h) on every sample, after the counters were
// read: it turns each device's ethtool and RDMA counters into a DeviceSample stamped with the
// sample's monotonic time, feeds the SignalDeriver, and attaches the device's signals to the
// snapshot. It reads no kernel interface.

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "exporter/sampling/sampler.h"
#include "exporter/signals/derive.h"

namespace roceqos {

inline constexpr std::string_view kSourceDerive = "derive";

class DeriveStage : public SampleStage {
 public:
  explicit DeriveStage(DeriveConfig config);

  std::string_view Source() const override { return kSourceDerive; }
  void Run(StageContext& ctx, Snapshot& draft) override;

 private:
  SignalDeriver deriver_;
  std::shared_ptr<const std::vector<std::string>> window_labels_;
  std::unordered_map<std::string, RdmaSignalIndex> rdma_indexes_;  // per netdev
};

}  // namespace roceqos
