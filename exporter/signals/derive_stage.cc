#include "exporter/signals/derive_stage.h"

#include <algorithm>
#include <optional>

#include "exporter/core/derived_signals.h"
#include "exporter/core/qos_state.h"

namespace roceqos {
namespace {

std::shared_ptr<const std::vector<std::string>> WindowLabels(const DeriveConfig& config) {
  auto labels = std::make_shared<std::vector<std::string>>();
  for (auto window : config.windows) labels->push_back(WindowLabel(window));
  return labels;
}

const DeviceSnapshot* PreviousOf(const Snapshot* previous, const DeviceSnapshot& device) {
  if (!previous) return nullptr;
  for (const DeviceSnapshot& old : previous->devices) {
    if (old.device == device.device) return &old;
  }
  return nullptr;
}

// The sampler carried a port that was not due forward: the same read (same time) as in the
// previous snapshot, no new interval.
bool CarriedForward(const DeviceSnapshot* previous, const DeviceSnapshot& device) {
  return previous && previous->ethtool && previous->ethtool->read_at == device.ethtool->read_at &&
         device.ethtool->read_at.count() != 0;
}

// The lossless priorities (docs/signals.md, "PFC against ECN, per role"): PFC enabled in the
// device's QoS state (DCB_ATTR_IEEE_PFC pfc_en) as last read, else the PFC its policy asks for.
// The QoS stage runs after this one, so the state is the previous snapshot's. Empty when neither
// is known (before the first QoS read, a failed DCB read and no `pfc:` in the policy): the
// counters present decide.
std::optional<uint8_t> LosslessPriosOf(const DeviceSnapshot* previous) {
  if (!previous || !previous->qos) return std::nullopt;
  const QosDeviceState& qos = *previous->qos;
  if (qos.observed.dcb.ok() && qos.observed.dcb.value.pfc) {
    return qos.observed.dcb.value.pfc->enabled_mask;
  }
  return qos.desired_pfc;
}

}  // namespace

DeriveStage::DeriveStage(DeriveConfig config)
    : deriver_(std::move(config)), window_labels_(WindowLabels(deriver_.config())) {}

void DeriveStage::Run(StageContext& ctx, Snapshot& draft) {
  std::vector<std::string> present;
  present.reserve(draft.devices.size());
  for (DeviceSnapshot& device : draft.devices) {
    if (!device.device) continue;
    const std::string& netdev = device.device->name;
    present.push_back(netdev);
    // A failed ethtool read leaves the device without a sample this time: the next successful
    // one forms a longer interval, and the signals published meanwhile are those of the last
    // successful sample (the storm state does not flap off because one read failed).
    const DeviceSnapshot* previous = PreviousOf(ctx.previous, device);
    if (device.ethtool && !CarriedForward(previous, device)) {
      DeviceSample sample;
      // The time of the device's own read: a sampler thread that wakes late (a loaded host, a
      // slow device before this one) must not turn into a rate or ratio error.
      const auto read_at = device.ethtool->read_at;
      sample.time = read_at.count() != 0 ? read_at : ctx.now;
      sample.identity.ifindex = device.device->ifindex;
      sample.identity.ethtool_generation = device.ethtool->string_set_changes;
      sample.lossless_prios = LosslessPriosOf(previous);
      if (device.ethtool->mapped) {
        FillFromEthtool(device.ethtool->counters, *device.ethtool->mapped, sample);
      }
      // The PF's own RDMA port; with several (not seen on mlx5 PFs) the first one in port order.
      if (!device.rdma.empty()) {
        const RdmaPortSample& port = device.rdma.front();
        sample.identity.rdma_device_index = port.port.device_index;
        sample.identity.rdma_port = port.port.port;
        sample.rdma_device = port.port.device;
        sample.rdma_port = port.port.port;
        sample.rdma_read_at = port.read_at;
        rdma_indexes_[netdev].Fill(port.counters, sample);
      }
      deriver_.Observe(netdev, sample);
    }
    if (auto signals = deriver_.SignalsOf(netdev)) {
      // The history ends at the last successful read, so it cannot vouch that no storm began
      // since; a storm it saw stays a storm, as the storm state does.
      if (!device.ethtool && signals->storm_evidence == StormEvidence::kClear) {
        signals->storm_evidence = StormEvidence::kUnknown;
        signals->storm_evidence_next_read = ctx.now;
      }
      device.derived = std::make_shared<const DerivedDeviceSignals>(
          DerivedDeviceSignals{std::move(*signals), window_labels_});
    }
  }
  deriver_.RetainOnly(present);
  ctx.sample_again_at = deriver_.NextSampleDue(ctx.now);
  ctx.read_again = deriver_.SamplesDue(ctx.now);
  std::erase_if(rdma_indexes_, [&](const auto& entry) {
    return std::find(present.begin(), present.end(), entry.first) == present.end();
  });
}

}  // namespace roceqos
