#pragma once

// What the transceiver poller (exporter/sampling/transceiver_poller.h) publishes: the module of
// every selected netdev as of its last read, and the poller's counts. Plain data beside the
// snapshot that carries it, so render/ reads it without knowing the poller.

#include <cstdint>
#include <map>
#include <string>

#include "collectors/transceiver/module_eeprom.h"
#include "collectors/transceiver/transceiver.h"

namespace roceqos {

/// One netdev's module, as of its last successful read.
struct TransceiverReading {
  Transceiver module;
  double read_seconds = 0;  // wall time of that read (all its half pages)
  ModuleAccess access;      // netlink or the ioctl fallback, and the pages it could not read
};

/// What the poller publishes; the renderer reads nothing else.
struct TransceiverState {
  /// netdev -> its module. Netdevs without a module EEPROM (EOPNOTSUPP, a non-SFF identifier) and
  /// those whose last read failed have no entry: a failed read leaves no stale values.
  std::map<std::string, TransceiverReading> modules;
  uint64_t reads = 0;  // module reads attempted since start (one per netdev per round)
  /// reason -> failed module reads since start; every reason is present (0 until it happens).
  std::map<std::string, uint64_t> errors;
  double interval_seconds = 0;    // --transceiver.interval
  double last_round_seconds = 0;  // wall time of the last round (every netdev)
  /// At least one read of the last round was refused for lack of permission (EPERM/EACCES: the
  /// process has no CAP_NET_ADMIN), so optics are missing for a reason the operator can fix.
  bool permission_denied = false;
  bool serial_numbers = false;  // --transceiver.serial: the info metric carries the serial
};

}  // namespace roceqos
