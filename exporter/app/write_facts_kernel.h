#pragma once

// The kernel's answers to the write gate's questions about a device and the lock
// (exporter/qos/write_facts.h): where a device identity is now (sysfs, through
// collectors/pci_function.h) and whether this process still holds the enforcer lock on the file
// its path names (EnforcerLock::StillHeld). Each call reads anew; nothing is cached.

#include <atomic>
#include <optional>
#include <string>

#include "exporter/app/enforcer_lock.h"
#include "exporter/qos/write_facts.h"

namespace roceqos {

/// Resolves "pci:<address>" to the function's netdev, its ifindex and its RDMA devices, and
/// "netdev:<name>" to that netdev while it exists and has no PCI function (an identity of that
/// form was given to a netdev without one; one that has a PCI function now is another device).
/// Anything else, or a function with no netdev or more than one, resolves to nothing: the gate
/// refuses what it cannot name exactly.
class KernelDeviceResolver : public DeviceResolver {
 public:
  explicit KernelDeviceResolver(std::string sysfs_root = "/sys")
      : sysfs_root_(std::move(sysfs_root)) {}
  std::optional<ResolvedDevice> Resolve(const std::string& identity) override;

 private:
  std::optional<ResolvedDevice> ResolvePci(const std::string& address) const;
  std::optional<ResolvedDevice> ResolveNetdev(const std::string& name) const;

  std::string sysfs_root_;
};

/// The enforcer lock as the gate sees it. `lock` must outlive this witness.
class KernelLockWitness : public LockWitness {
 public:
  explicit KernelLockWitness(const EnforcerLock* lock) : lock_(lock) {}
  bool StillHeld() override { return lock_ != nullptr && lock_->StillHeld(); }

 private:
  const EnforcerLock* lock_;
};

/// The sampler's storm evidence, which exists only once the sampler does (after the QoS engine):
/// until Bind(), every answer is "unknown", so nothing is written.
class DeferredStormWitness : public StormWitness {
 public:
  void Bind(StormWitness* target) { target_.store(target); }
  StormFacts Witness(const std::string& netdev, std::chrono::nanoseconds max_age) override {
    StormWitness* target = target_.load();
    return target != nullptr ? target->Witness(netdev, max_age) : StormFacts{};
  }

 private:
  std::atomic<StormWitness*> target_{nullptr};
};

/// The facts enforce's write gate takes from this host, for the life of the process.
struct KernelWriteFacts {
  KernelDeviceResolver devices;
  KernelLockWitness lock;
  DeferredStormWitness storm;
  WriteFacts Facts() { return {&storm, &devices, &lock}; }
};

}  // namespace roceqos
