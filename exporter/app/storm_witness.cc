#include "exporter/app/storm_witness.h"

#include <algorithm>
#include <optional>

#include "exporter/app/storm_guard.h"
#include "exporter/core/derived_signals.h"

namespace roceqos {
namespace {

using std::chrono::nanoseconds;
using Steady = std::chrono::steady_clock;

const DeviceSnapshot* FindDevice(const Snapshot* snapshot, const std::string& netdev) {
  if (!snapshot) return nullptr;
  auto it =
      std::find_if(snapshot->devices.begin(), snapshot->devices.end(),
                   [&](const DeviceSnapshot& d) { return d.device && d.device->name == netdev; });
  return it == snapshot->devices.end() ? nullptr : &*it;
}

// The evidence's read time on the sampler's clock; none without derived signals.
std::optional<nanoseconds> ReadTime(const DeviceSnapshot& device) {
  if (!device.derived) return std::nullopt;
  return device.derived->signals.storm_evidence_read_at;
}

// Whether more reads can change the answer the gate would act on: a storm stays a storm for
// longer than any wait, and a clear verdict on a recent read is what the gate asks for.
bool Settled(const StormFacts& facts, std::optional<nanoseconds> read_at, nanoseconds now,
             nanoseconds max_age) {
  if (facts.verdict == StormGuard::kStorm) return true;
  return facts.verdict == StormGuard::kClear && read_at && now - *read_at <= max_age;
}

// When to read the device next: at once for a stale `clear`; for `unknown`, when the derivation
// says a read can move it towards `clear` (the end of the quiet span, a follow-up), at once when
// that time has passed or it says nothing.
nanoseconds NextRead(const DeviceSnapshot& device, nanoseconds now) {
  if (!device.derived) return now;
  const DeviceSignals& signals = device.derived->signals;
  if (signals.storm_evidence != StormEvidence::kUnknown || !signals.storm_evidence_next_read) {
    return now;
  }
  return std::max(now, *signals.storm_evidence_next_read);
}

}  // namespace

StormFacts StormFactsOf(const DeviceSnapshot& device) {
  StormFacts facts;
  facts.verdict = StormGuardOf(device);
  if (auto read_at = ReadTime(device)) {
    facts.newest_read = Steady::time_point(std::chrono::duration_cast<Steady::duration>(*read_at));
  }
  return facts;
}

StormFacts SamplerStormWitness::Witness(const std::string& netdev, nanoseconds max_age) {
  const Steady::time_point deadline = Steady::now() + std::max(2 * max_age, options_.max_wait);
  std::shared_ptr<const Snapshot> snapshot = sampler_.Latest();
  if (!snapshot && sampler_.WaitForSequence(1, deadline)) snapshot = sampler_.Latest();
  for (;;) {
    const DeviceSnapshot* device = FindDevice(snapshot.get(), netdev);
    if (!device) return {};
    const StormFacts facts = StormFactsOf(*device);
    const std::optional<nanoseconds> read_at = ReadTime(*device);
    // Without derived signals (no derive stage) no read can produce evidence.
    if (!read_at) return facts;
    const nanoseconds now = sampler_.Now();
    if (Settled(facts, read_at, now, max_age)) return facts;
    // The sampler's clock and the steady clock differ in epoch only.
    const nanoseconds read_next = NextRead(*device, now);
    if (Steady::now() + (read_next - now) > deadline) return facts;
    sampler_.RequestRead(netdev, read_next);
    bool read = false;
    snapshot = WaitForRead(netdev, *read_at, deadline, read);
    if (!read) {
      // The wait ended (deadline, sampler stopped): the newest facts are the answer.
      const DeviceSnapshot* newest = FindDevice(snapshot.get(), netdev);
      return newest ? StormFactsOf(*newest) : StormFacts{};
    }
  }
}

std::shared_ptr<const Snapshot> SamplerStormWitness::WaitForRead(const std::string& netdev,
                                                                 nanoseconds read_at,
                                                                 Steady::time_point deadline,
                                                                 bool& read) const {
  for (;;) {
    std::shared_ptr<const Snapshot> snapshot = sampler_.Latest();
    const DeviceSnapshot* device = FindDevice(snapshot.get(), netdev);
    const std::optional<nanoseconds> newest = device ? ReadTime(*device) : std::nullopt;
    // A device gone from the snapshot has news too: the answer is `unknown` at once.
    read = !device || (newest && *newest > read_at);
    if (read) return snapshot;
    const uint64_t sequence = snapshot ? snapshot->sequence : 0;
    if (!sampler_.WaitForSequence(sequence + 1, deadline)) return sampler_.Latest();
  }
}

}  // namespace roceqos
