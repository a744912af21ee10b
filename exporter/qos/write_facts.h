#pragma once

// The facts the write gate (write_gate.h) takes at the moment of each write, behind small
// interfaces: the storm evidence of the device, where its identity is now, and whether this
// process still holds the enforcer lock. Production implementations live with what they read
// (the sampler's snapshots, sysfs, the lock file); the enforce simulation fakes them.
// docs/remediation.md "The write gate".

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roceqos {

/// What the storm state machine can say about a device. Only kClear lets a write through: right
/// after a start there is no history, and a device without pause-duration counters can never say
/// "no storm" from its ratio (docs/remediation.md "No write during a storm").
enum class StormGuard : uint8_t {
  kClear,    // enough history, no storm on, none suspected (or no pause counter moved)
  kStorm,    // a storm is on (or a detection run is under way)
  kUnknown,  // not enough history yet, or no pause-duration counters while pause counters move
};

/// The storm verdict for one device as of its newest counter read.
struct StormFacts {
  StormGuard verdict = StormGuard::kUnknown;
  /// When the newest counter read behind the verdict was taken (steady clock); unset when the
  /// device was never read.
  std::optional<std::chrono::steady_clock::time_point> newest_read;
};

/// Storm evidence on demand. Production: the sampler's newest snapshot; when its read of the
/// device is older than `max_age`, it asks the sampler for a read of that device and waits for
/// it (bounded), then answers from what it has.
class StormWitness {
 public:
  virtual ~StormWitness() = default;
  virtual StormFacts Witness(const std::string& netdev, std::chrono::nanoseconds max_age) = 0;
};

/// Where a device identity is now, as the kernel shows it.
struct ResolvedDevice {
  std::string netdev;
  int ifindex = 0;
  std::vector<std::string> rdma_devices;  // RDMA devices on the same PCI function
};

class DeviceResolver {
 public:
  virtual ~DeviceResolver() = default;
  /// `identity` is DeviceIdentity()'s "pci:<address>" (or "netdev:<name>"); nullopt when no
  /// netdev has it now.
  virtual std::optional<ResolvedDevice> Resolve(const std::string& identity) = 0;
};

/// The one-enforcer-per-node lock, looked at again before each write.
class LockWitness {
 public:
  virtual ~LockWitness() = default;
  /// True while this process holds the lock on the file its path names now (the same inode,
  /// not a file that replaced it).
  virtual bool StillHeld() = 0;
};

}  // namespace roceqos
