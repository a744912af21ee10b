#pragma once

// The write gate's storm evidence (exporter/qos/write_facts.h StormWitness), taken from the
// sampler at the moment of a write. A device's evidence in the newest snapshot is only as recent
// as its last read, which the per-port schedule may have taken an idle period ago; so when that
// read is older than the gate allows, the witness asks the sampler to read the device (and, while
// the evidence is `unknown`, to take the reads that can clear it) and waits, bounded, for the
// snapshots that carry them: docs/signals.md "Storm guard".

#include <chrono>
#include <memory>
#include <string>

#include "exporter/core/snapshot.h"
#include "exporter/qos/write_facts.h"
#include "exporter/sampling/sampler.h"

namespace roceqos {

/// The facts of one device in a snapshot: its StormGuardOf verdict and the time of the counter
/// read the evidence rests on (none without derived signals).
StormFacts StormFactsOf(const DeviceSnapshot& device);

struct StormWitnessOptions {
  /// The longest one Witness call waits for reads; at least 2 × its max_age. The default covers
  /// the default quiet span (400 ms) behind a read that ends a gap, with the sampler's wake-up gap
  /// and the reads themselves.
  std::chrono::nanoseconds max_wait = std::chrono::seconds(1);
};

class SamplerStormWitness : public StormWitness {
 public:
  explicit SamplerStormWitness(Sampler& sampler, StormWitnessOptions options = {})
      : sampler_(sampler), options_(options) {}

  /// `clear` only with a read within `max_age` of now (the sampler's clock); `storm` as soon as
  /// the evidence says so; otherwise the newest facts when the wait ends. A device missing from
  /// the newest snapshot (gone, not selected) is `unknown` with no read time. Thread-safe: it
  /// only reads published snapshots and queues read requests.
  StormFacts Witness(const std::string& netdev, std::chrono::nanoseconds max_age) override;

 private:
  /// Waits until a snapshot holds a read of `netdev` newer than `read_at` or no longer holds the
  /// device (`read` true), or `deadline` passes or the sampler stops (`read` false); returns the
  /// newest snapshot.
  std::shared_ptr<const Snapshot> WaitForRead(const std::string& netdev,
                                              std::chrono::nanoseconds read_at,
                                              std::chrono::steady_clock::time_point deadline,
                                              bool& read) const;

  Sampler& sampler_;
  StormWitnessOptions options_;
};

}  // namespace roceqos
