// The inputs of derivation, declared in derive.h beside the deriver that consumes them: a
// device's sample filled from its ethtool and RDMA counters, one counter's step between two
// samples, the derive configuration's checks and the names of its enums.

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>

#include "collectors/rdma.h"
#include "exporter/signals/derive.h"

namespace roceqos {
namespace {

namespace slot = signal_slot;

}  // namespace

unsigned SignalSlotWidthBits(size_t /*slot*/) { return 64; }

CounterStep StepCounter(uint64_t previous, uint64_t current, unsigned width_bits) {
  if (current >= previous) return {CounterStep::Kind::kForward, current - previous};
  if (width_bits >= 64 || width_bits == 0) return {CounterStep::Kind::kReset, 0};
  const uint64_t range = uint64_t{1} << width_bits;
  if (previous >= range) return {CounterStep::Kind::kReset, 0};  // not a value of that width
  const uint64_t modular = range - previous + current;
  if (modular <= range / 4) return {CounterStep::Kind::kWrapped, modular};
  return {CounterStep::Kind::kReset, 0};
}

uint8_t DeviceSample::LosslessPrios() const {
  if (lossless_prios) return *lossless_prios;
  uint8_t mask = 0;
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    for (Direction direction : slot::kDirections) {
      if (present.test(slot::PauseFrames(direction, prio)) ||
          present.test(slot::PauseDurationMicros(direction, prio))) {
        mask = static_cast<uint8_t>(mask | (1u << prio));
      }
    }
  }
  return mask;
}

void FillFromEthtool(const CounterSet& counters, std::span<const MappedCounter> mapping,
                     DeviceSample& sample) {
  for (const MappedCounter& mapped : mapping) {
    if (mapped.source_index >= counters.values.size()) continue;
    const uint64_t value = counters.values[mapped.source_index];
    const bool per_prio = mapped.index >= 0 && mapped.index < kNumPriorities;
    const bool directed = mapped.direction == Direction::kRx || mapped.direction == Direction::kTx;
    switch (mapped.counter) {
      case PortCounter::kPauseFrames:
        if (per_prio && directed)
          sample.Set(slot::PauseFrames(mapped.direction, mapped.index), value);
        break;
      case PortCounter::kPauseDurationMicros:
        if (per_prio && directed) {
          sample.Set(slot::PauseDurationMicros(mapped.direction, mapped.index), value);
        }
        break;
      case PortCounter::kPrioPackets:
        if (per_prio && directed)
          sample.Set(slot::PrioPackets(mapped.direction, mapped.index), value);
        break;
      case PortCounter::kPauseStormWarningEvents:
        sample.Set(slot::kStormWarningEvents, value);
        break;
      case PortCounter::kPauseStormErrorEvents:
        sample.Set(slot::kStormErrorEvents, value);
        break;
      default:
        break;
    }
  }
}

void RdmaSignalIndex::Fill(const CounterSet& counters, DeviceSample& sample) {
  if (counters.names != indexed_names_) {
    indexed_names_ = counters.names;
    positions_ = {-1, -1, -1};
    if (indexed_names_) {
      const auto& names = *indexed_names_;
      for (size_t i = 0; i < names.size(); ++i) {
        const auto counter = ValueOf(kRdmaCongestionCounterNames, names[i]);
        if (counter == RdmaCongestionCounter::kNpCnpSent) positions_[0] = static_cast<int32_t>(i);
        if (counter == RdmaCongestionCounter::kNpEcnMarkedRocePackets) {
          positions_[1] = static_cast<int32_t>(i);
        }
        if (counter == RdmaCongestionCounter::kRpCnpHandled)
          positions_[2] = static_cast<int32_t>(i);
      }
    }
  }
  constexpr std::array<size_t, 3> kSlots{slot::kNpCnpSent, slot::kNpEcnMarkedRocePackets,
                                         slot::kRpCnpHandled};
  for (size_t i = 0; i < kSlots.size(); ++i) {
    const int32_t position = positions_[i];
    if (position >= 0 && static_cast<size_t>(position) < counters.values.size()) {
      sample.Set(kSlots[i], counters.values[static_cast<size_t>(position)]);
    }
  }
}

std::string_view DiscardReasonName(DiscardReason reason) {
  return NameOf(kDiscardReasonNames, reason);
}

std::string_view StormEvidenceName(StormEvidence evidence) {
  return NameOf(kStormEvidenceNames, evidence);
}

Result<DeriveConfig> MakeDeriveConfig(std::vector<std::chrono::seconds> windows,
                                      StormConfig storm) {
  if (windows.empty() || windows.size() > kMaxWindows) {
    return MakeError(EINVAL, "--derive.windows: give 1 to " + std::to_string(kMaxWindows) +
                                 " windows, got " + std::to_string(windows.size()));
  }
  for (auto window : windows) {
    if (window < kWindowBucket || window > kMaxWindow) {
      return MakeError(EINVAL, "--derive.windows: " + std::to_string(window.count()) +
                                   "s is outside 1s.." + WindowLabel(kMaxWindow));
    }
  }
  std::sort(windows.begin(), windows.end());
  if (std::adjacent_find(windows.begin(), windows.end()) != windows.end()) {
    return MakeError(EINVAL, "--derive.windows: a window is listed twice");
  }
  DeriveConfig config;
  config.windows = std::move(windows);
  config.storm = storm;
  return config;
}

std::string WindowLabel(std::chrono::seconds window) {
  const auto s = window.count();
  if (s > 0 && s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

const DeviceSignals* DerivedSignals::Find(std::string_view netdev) const {
  auto it =
      std::lower_bound(devices.begin(), devices.end(), netdev,
                       [](const DeviceSignals& d, std::string_view n) { return d.netdev < n; });
  return it != devices.end() && it->netdev == netdev ? &*it : nullptr;
}

}  // namespace roceqos
