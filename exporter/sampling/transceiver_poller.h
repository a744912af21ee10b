#pragma once

// The transceiver poller: its own thread reads the module EEPROM of every selected netdev once per
// --transceiver.interval and publishes an immutable TransceiverState. On mlx5 every half page is a
// firmware register access (MCIA, tens of ms), so this never runs on the counter sampler's thread:
// the sampler only attaches the latest published state to its snapshot (a pointer copy), and the
// scrape renders that. A netdev that left the selection is dropped at the next round, and the
// renderer shows a module only for netdevs of the snapshot it renders.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/published.h"
#include "collectors/transceiver/module_eeprom.h"
#include "collectors/transceiver/transceiver.h"
#include "exporter/core/error_reason.h"
#include "exporter/core/fault_log.h"
#include "exporter/core/periodic_thread.h"
#include "exporter/core/transceiver_state.h"

namespace roceqos {

struct TransceiverPollerOptions {
  std::chrono::nanoseconds interval = std::chrono::seconds(60);
  bool serial_numbers = false;
};

class TransceiverPoller {
 public:
  /// The netdevs to read (the sampler's current selection); called on the poller thread.
  using Netdevs = std::function<std::vector<std::string>()>;
  using Clock = std::function<std::chrono::nanoseconds()>;

  TransceiverPoller(TransceiverPollerOptions options, std::unique_ptr<ModuleEepromIo> io,
                    Netdevs netdevs, Clock clock = {});
  ~TransceiverPoller();
  TransceiverPoller(const TransceiverPoller&) = delete;
  TransceiverPoller& operator=(const TransceiverPoller&) = delete;

  /// Reads every netdev once and publishes. Not concurrently with itself or a running thread.
  void PollOnce();

  /// Starts the thread (first round immediately, then every interval); Stop() joins. Idempotent.
  void Start();
  void Stop();

  /// The latest published state; null before the first round. Thread-safe, never blocks.
  std::shared_ptr<const TransceiverState> Latest() const { return latest_.Load(); }

 private:
  /// Logs a netdev's ioctl fallback once (and again when its unread pages change).
  void NoteAccess(const std::string& netdev, const ModuleAccess& access);
  /// Logs one warning naming the fix when a round starts being refused for permission, and one
  /// info line when reads are permitted again: once per transition, not per round or netdev.
  void NotePermission(bool denied);

  TransceiverPollerOptions options_;
  std::unique_ptr<ModuleEepromIo> io_;
  ModuleEepromCollector collector_;
  Netdevs netdevs_;
  Clock clock_;
  FaultLog fault_log_;
  uint64_t reads_ = 0;
  std::map<std::string, uint64_t> errors_;
  /// netdev -> the unread pages last logged for its ioctl fallback: logged once per netdev (and
  /// again only if what it cannot read changes), not every round.
  std::map<std::string, std::string> fallback_logged_;
  bool permission_denied_ = false;  // the last round's, for logging on transition only
  Published<TransceiverState> latest_;
  PeriodicThread thread_;  // last: stopped before the members its rounds use are destroyed
};

/// The ethtool-netlink (ioctl fallback) implementation of ModuleEepromIo, for main.
std::unique_ptr<ModuleEepromIo> MakeKernelTransceiverIo();

}  // namespace roceqos
