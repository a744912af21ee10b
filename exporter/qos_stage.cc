#include "exporter/qos_stage.h"

#include "exporter/error_reason.h"
#include "exporter/qos_state.h"

namespace roceqos {

void QosStage::Run(StageContext& ctx, Snapshot& draft) {
  std::vector<QosEngine::DeviceInput> inputs;
  inputs.reserve(draft.devices.size());
  for (const DeviceSnapshot& d : draft.devices) {
    QosEngine::DeviceInput input;
    input.device = d.device;
    if (ctx.previous != nullptr && d.device) {
      if (const DeviceSnapshot* prev = ctx.previous->FindDevice(d.device->name))
        input.previous = prev->qos;
    }
    input.pfc_storm = storm_ && storm_(d);
    inputs.push_back(std::move(input));
  }
  QosEngine::Output out = engine_->Update(inputs);
  for (size_t i = 0; i < draft.devices.size() && i < out.devices.size(); ++i)
    draft.devices[i].qos = std::move(out.devices[i]);
  draft.qos = std::move(out.global);
  ctx.kernel_time += out.kernel_time;
  for (const Error& e : out.errors) ctx.errors.emplace_back(ErrorReason(e));
}

}  // namespace roceqos
