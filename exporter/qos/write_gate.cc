#include "exporter/qos/write_gate.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/enum_names.h"
#include "base/log_event.h"

namespace roceqos {
namespace {

constexpr EnumName<GateRefusal> kRefusalNames[] = {
    {GateRefusal::kNone, "none"},
    {GateRefusal::kNoAttempt, "no_attempt"},
    {GateRefusal::kDeviceGone, "device_gone"},
    {GateRefusal::kIdentityMoved, "identity_moved"},
    {GateRefusal::kStorm, "storm"},
    {GateRefusal::kStormUnknown, "storm_unknown"},
    {GateRefusal::kStormStale, "storm_evidence_stale"},
    {GateRefusal::kLockLost, "lock_lost"},
    {GateRefusal::kLedgerBackoff, "backoff"},
    {GateRefusal::kLedgerExhausted, "max_attempts"},
    {GateRefusal::kLedgerGaveUp, "gave_up"},
    {GateRefusal::kLedgerNotDurable, "ledger_not_durable"},
};

GateRefusal LedgerRefusal(Ledger::Verdict verdict) {
  switch (verdict) {
    case Ledger::Verdict::kAllowed:
      return GateRefusal::kNone;
    case Ledger::Verdict::kBackoff:
      return GateRefusal::kLedgerBackoff;
    case Ledger::Verdict::kExhausted:
      return GateRefusal::kLedgerExhausted;
    case Ledger::Verdict::kGaveUp:
      return GateRefusal::kLedgerGaveUp;
    case Ledger::Verdict::kUnavailable:
      break;
  }
  return GateRefusal::kLedgerNotDurable;
}

GateRefusal IdentityRefusal(const PlannedAttempt& attempt, const WriteTarget& target,
                            const GateFacts& facts) {
  if (!facts.device) return GateRefusal::kDeviceGone;
  if (facts.device->netdev != attempt.netdev) return GateRefusal::kIdentityMoved;
  // The policy was resolved with these RDMA devices: an rdma_device rule may not hold any more.
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto& rdma = facts.device->rdma_devices;
  if (sorted(rdma) != sorted(attempt.rdma_devices)) return GateRefusal::kIdentityMoved;
  if (!target.rdma_device.empty() &&
      std::find(rdma.begin(), rdma.end(), target.rdma_device) == rdma.end())
    return GateRefusal::kIdentityMoved;
  return GateRefusal::kNone;
}

GateRefusal StormRefusal(const GateFacts& facts, std::chrono::nanoseconds max_age) {
  if (!facts.storm.newest_read || facts.now - *facts.storm.newest_read > max_age)
    return GateRefusal::kStormStale;
  if (facts.storm.verdict == StormGuard::kStorm) return GateRefusal::kStorm;
  if (facts.storm.verdict != StormGuard::kClear) return GateRefusal::kStormUnknown;
  return GateRefusal::kNone;
}

}  // namespace

std::string_view GateRefusalName(GateRefusal refusal) { return NameOf(kRefusalNames, refusal); }

GateDecision DecideWrite(const std::optional<PlannedAttempt>& attempt, const WriteTarget& target,
                         const GateFacts& facts, std::chrono::nanoseconds storm_max_age,
                         const GateSeams& seams) {
  if (!attempt) return {GateRefusal::kNoAttempt};
  if (!seams.skip_lock && !facts.lock_held) return {GateRefusal::kLockLost};
  if (!seams.skip_identity) {
    if (GateRefusal r = IdentityRefusal(*attempt, target, facts); r != GateRefusal::kNone)
      return {r};
  }
  if (!seams.skip_storm) {
    if (GateRefusal r = StormRefusal(facts, storm_max_age); r != GateRefusal::kNone) return {r};
  }
  GateDecision decision;
  // A host-wide write is the host's attempt, not the device's: tcp_ecn that never holds (a
  // read-only /proc/sys) must not use up the device's attempts.
  decision.record_device = !target.host_wide && !facts.device_recorded;
  decision.record_host = target.host_wide && !facts.host_recorded;
  if (seams.skip_ledger) return decision;
  // An attempt already recorded goes on; a new one needs the ledger's leave, for the device and,
  // for a host-wide write, for the host.
  if (decision.record_device) {
    if (GateRefusal r = LedgerRefusal(facts.device_ledger); r != GateRefusal::kNone) return {r};
  }
  if (decision.record_host) {
    if (GateRefusal r = LedgerRefusal(facts.host_ledger); r != GateRefusal::kNone) return {r};
  }
  return decision;
}

WriteGate::WriteGate(Ledger* ledger, WriteFacts facts, std::chrono::nanoseconds storm_max_age,
                     Now now, GateSeams seams)
    : ledger_(ledger),
      facts_(facts),
      storm_max_age_(storm_max_age),
      now_(std::move(now)),
      seams_(seams) {}

void WriteGate::Open(PlannedAttempt attempt) {
  attempt_ = std::move(attempt);
  device_recorded_ = false;
  host_recorded_ = false;
  last_refusal_ = GateRefusal::kNone;
}

void WriteGate::Close() {
  if (attempt_ && device_recorded_) ledger_->EndAttempt(attempt_->identity);
  if (attempt_ && host_recorded_) ledger_->EndAttempt(std::string(kHostIdentity));
  attempt_.reset();
}

const std::string& WriteGate::netdev() const {
  static const std::string kNone;
  return attempt_ ? attempt_->netdev : kNone;
}

GateFacts WriteGate::TakeFacts(const WriteTarget& target) {
  GateFacts facts;
  facts.lock_held = !lock_lost_ && facts_.lock != nullptr && facts_.lock->StillHeld();
  if (!facts.lock_held && !lock_lost_ && !seams_.skip_lock) {
    lock_lost_ = true;  // a replaced lock file cannot be trusted again
    // Another process may hold the new lock and own the state file: ours must not overwrite it.
    ledger_->Freeze("lock_lost", "the enforcer lock file was replaced or removed");
    LogEvent(spdlog::level::err,
             "remediation: the enforcer lock is no longer held on the file its path names; this "
             "process writes nothing more",
             {{"netdev", netdev()}});
  }
  // Re-resolved at each write on purpose: the pass's resolution may predate a rename or rebind.
  if (facts_.devices != nullptr) facts.device = facts_.devices->Resolve(attempt_->identity);
  if (facts_.storm != nullptr)
    facts.storm = facts_.storm->Witness(attempt_->netdev, storm_max_age_);
  // The witness may wait for a fresh read: the clock is read after it.
  facts.now = now_();
  facts.device_ledger = ledger_->Check(attempt_->identity, facts.now);
  if (target.host_wide) facts.host_ledger = ledger_->Check(std::string(kHostIdentity), facts.now);
  facts.device_recorded = device_recorded_;
  facts.host_recorded = host_recorded_;
  return facts;
}

GateRefusal WriteGate::Admit(const WriteTarget& target) {
  if (!attempt_) return last_refusal_ = GateRefusal::kNoAttempt;
  const GateFacts facts = TakeFacts(target);
  GateDecision decision = DecideWrite(attempt_, target, facts, storm_max_age_, seams_);
  if (decision.refusal != GateRefusal::kNone) return last_refusal_ = decision.refusal;
  // On disk before the write: a kill from here on is seen by the next start.
  if (decision.record_device && !seams_.skip_durable_record) {
    if (!ledger_->BeginAttempt(attempt_->identity, attempt_->netdev))
      return last_refusal_ = GateRefusal::kLedgerNotDurable;
  }
  device_recorded_ = device_recorded_ || !target.host_wide;
  if (decision.record_host && !seams_.skip_durable_record) {
    if (!ledger_->BeginAttempt(std::string(kHostIdentity), attempt_->netdev))
      return last_refusal_ = GateRefusal::kLedgerNotDurable;
  }
  host_recorded_ = host_recorded_ || target.host_wide;
  return last_refusal_ = GateRefusal::kNone;
}

Result<void> GatedWriter::Ask(const WriteTarget& target) const {
  const GateRefusal refusal = gate_->Admit(target);
  if (refusal == GateRefusal::kNone) return {};
  return MakeError(EPERM, fmt::format("refused by the write gate: {}", GateRefusalName(refusal)));
}

Result<void> GatedWriter::SetDcb(const std::string& netdev, const DcbWrite& write) {
  if (Result<void> ok = Ask({}); !ok) return ok;
  return inner_->SetDcb(netdev, write);
}

Result<void> GatedWriter::DeleteDcbApps(const std::string& netdev,
                                        const std::vector<DcbApp>& apps) {
  if (Result<void> ok = Ask({}); !ok) return ok;
  return inner_->DeleteDcbApps(netdev, apps);
}

Result<void> GatedWriter::WriteDcqcn(const std::string& netdev, bool np, int prio, bool enable) {
  if (Result<void> ok = Ask({}); !ok) return ok;
  return inner_->WriteDcqcn(netdev, np, prio, enable);
}

Result<void> GatedWriter::WriteTcpEcn(int value) {
  if (Result<void> ok = Ask({.host_wide = true, .rdma_device = {}}); !ok) return ok;
  return inner_->WriteTcpEcn(value);
}

Result<void> GatedWriter::WriteRoceTos(const std::string& rdma_device, uint32_t port, int tos) {
  if (Result<void> ok = Ask({.host_wide = false, .rdma_device = rdma_device}); !ok) return ok;
  return inner_->WriteRoceTos(rdma_device, port, tos);
}

Result<void> GatedWriter::WriteDcqcnParam(const std::string& netdev, bool np,
                                          const std::string& param, uint64_t value) {
  if (Result<void> ok = Ask({}); !ok) return ok;
  return inner_->WriteDcqcnParam(netdev, np, param, value);
}

}  // namespace roceqos
