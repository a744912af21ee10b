#include "exporter/qos/qos_stage.h"

#include "exporter/core/error_reason.h"
#include "exporter/core/qos_state.h"

namespace roceqos {
namespace {

std::optional<uint8_t> PfcMask(const QosDeviceState* state) {
  if (state == nullptr || !state->observed.dcb.ok() || !state->observed.dcb.value.pfc) {
    return std::nullopt;
  }
  return state->observed.dcb.value.pfc->enabled_mask;
}

}  // namespace

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
    input.storm = storm_ ? storm_(d) : StormGuard::kUnknown;
    // Whether RoCE moves on the port, from what this sample read (no kernel call of its own).
    if (d.ethtool) input.ethtool = &d.ethtool->counters;
    for (const RdmaPortSample& port : d.rdma) input.rdma.push_back(&port.counters);
    inputs.push_back(std::move(input));
  }
  QosEngine::Output out = engine_->Update(inputs);
  for (size_t i = 0; i < draft.devices.size() && i < out.devices.size(); ++i) {
    // A PFC change that no notification announced (firmware, DCBX, a write by this exporter)
    // can rewrite mlx5's ethtool string set without changing its size: re-read the names.
    if (inputs[i].previous && draft.devices[i].device &&
        PfcMask(inputs[i].previous.get()) != PfcMask(out.devices[i].get())) {
      ctx.invalidate_ethtool_names.push_back(draft.devices[i].device->name);
    }
    draft.devices[i].qos = std::move(out.devices[i]);
  }
  draft.qos = std::move(out.global);
  ctx.kernel_time += out.kernel_time;
  for (const Error& e : out.errors) ctx.errors.push_back(ReasonOf(e));
}

}  // namespace roceqos
