#pragma once

// The one write gate. Every write enforce makes, to a device or to a host file, passes through
// WriteGate::Admit, which takes its facts at that moment (where the device's identity is now,
// fresh storm evidence, the enforcer lock, the ledger) and decides in one pure function,
// DecideWrite. Nothing captured earlier (a pass posted before a storm, a name captured before a
// rename) can authorize a write. The first write of an attempt is recorded durably in the ledger
// before it is made. docs/remediation.md "The write gate".

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/qos/ledger.h"
#include "exporter/qos/qos_writer.h"
#include "exporter/qos/write_facts.h"

namespace roceqos {

/// The providers of the facts a write is decided on. A missing provider refuses every write.
struct WriteFacts {
  StormWitness* storm = nullptr;
  DeviceResolver* devices = nullptr;
  LockWitness* lock = nullptr;
};

enum class GateRefusal : uint8_t {
  kNone,              // allowed
  kNoAttempt,         // a write outside an open attempt
  kDeviceGone,        // no netdev has the identity now
  kIdentityMoved,     // the identity's netdev or RDMA devices are not the ones planned
  kStorm,             // fresh evidence shows a storm
  kStormUnknown,      // the evidence cannot rule a storm out
  kStormStale,        // the newest read is older than the evidence's max age
  kLockLost,          // the enforcer lock is not held on the file its path names
  kLedgerBackoff,     // the identity (or the host) waits out its back-off
  kLedgerExhausted,   // max_attempts reached
  kLedgerGaveUp,      // given up
  kLedgerNotDurable,  // the attempt could not be saved, or the state file is unusable
};
std::string_view GateRefusalName(GateRefusal refusal);

/// What one write touches.
struct WriteTarget {
  bool host_wide = false;   // net.ipv4.tcp_ecn: charged to the host's ledger entry too
  std::string rdma_device;  // roce_tos: the RDMA device written, which must still be the device's
};

/// Everything DecideWrite looks at, taken when the write is about to be made.
struct GateFacts {
  std::chrono::steady_clock::time_point now{};
  std::optional<ResolvedDevice> device;  // where the identity is now
  StormFacts storm;
  bool lock_held = false;
  Ledger::Verdict device_ledger = Ledger::Verdict::kUnavailable;
  Ledger::Verdict host_ledger = Ledger::Verdict::kUnavailable;
  bool device_recorded = false;  // this attempt is already in the ledger, durably
  bool host_recorded = false;
};

/// The attempt a write belongs to, as planned.
struct PlannedAttempt {
  std::string identity;
  std::string netdev;
  /// The RDMA devices the plan's policy was resolved with (an rdma_device rule depends on them).
  std::vector<std::string> rdma_devices;
};

struct GateDecision {
  GateRefusal refusal = GateRefusal::kNone;
  bool record_device = false;  // allowed once the attempt is saved for the device
  bool record_host = false;    // ... and for the host
};

/// Removes one guard: the enforce simulation's self-test shows each invariant catches its
/// removal. Never set outside tests.
struct GateSeams {
  bool skip_identity = false;
  bool skip_storm = false;
  bool skip_lock = false;
  bool skip_ledger = false;
  bool skip_durable_record = false;
};

/// The decision, from the facts alone.
GateDecision DecideWrite(const std::optional<PlannedAttempt>& attempt, const WriteTarget& target,
                         const GateFacts& facts, std::chrono::nanoseconds storm_max_age,
                         const GateSeams& seams = {});

class WriteGate {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  WriteGate(Ledger* ledger, WriteFacts facts, std::chrono::nanoseconds storm_max_age, Now now,
            GateSeams seams = {});

  /// An apply begins, planned for `attempt`; no write is decided yet.
  void Open(PlannedAttempt attempt);
  /// The apply's verification read is done: its ledger entries are closed.
  void Close();
  /// Takes the facts now and decides. Records the attempt durably first when it is the first
  /// write of the attempt (for the host entry: the first host-wide one).
  GateRefusal Admit(const WriteTarget& target);

  /// The netdev the open attempt writes to.
  const std::string& netdev() const;
  /// The attempt reached the ledger (the device's or the host's entry): a write was admitted.
  bool recorded() const { return device_recorded_ || host_recorded_; }
  GateRefusal last_refusal() const { return last_refusal_; }
  /// Set once the lock was seen lost: the process writes nothing again.
  bool lock_lost() const { return lock_lost_; }

 private:
  GateFacts TakeFacts(const WriteTarget& target);

  Ledger* ledger_;
  WriteFacts facts_;
  std::chrono::nanoseconds storm_max_age_;
  Now now_;
  GateSeams seams_;
  std::optional<PlannedAttempt> attempt_;
  bool device_recorded_ = false;
  bool host_recorded_ = false;
  bool lock_lost_ = false;
  GateRefusal last_refusal_ = GateRefusal::kNone;
};

/// A QosWriter whose every write asks the gate first; a refused write is not made and fails
/// with "refused by the write gate: <reason>".
class GatedWriter : public QosWriter {
 public:
  GatedWriter(QosWriter* inner, WriteGate* gate) : inner_(inner), gate_(gate) {}
  Result<void> SetDcb(const std::string& netdev, const DcbWrite& write) override;
  Result<void> DeleteDcbApps(const std::string& netdev, const std::vector<DcbApp>& apps) override;
  Result<void> WriteDcqcn(const std::string& netdev, bool np, int prio, bool enable) override;
  Result<void> WriteTcpEcn(int value) override;
  Result<void> WriteRoceTos(const std::string& rdma_device, uint32_t port, int tos) override;
  Result<void> WriteDcqcnParam(const std::string& netdev, bool np, const std::string& param,
                               uint64_t value) override;

 private:
  /// The gate's verdict as a Result: empty when allowed.
  Result<void> Ask(const WriteTarget& target) const;

  QosWriter* inner_;
  WriteGate* gate_;
};

}  // namespace roceqos
