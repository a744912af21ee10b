#pragma once

// The RoCE v2 GID check (gid_check.h) as a sample stage: once per --gids.interval, on the sampler
// thread, one RTM_GETADDR dump and the GID tables of the RDMA ports bound to the selected netdevs
// (sysfs: a file per table entry, answered from the kernel's GID cache, no firmware call), then
// the check; the samples between carry the last result forward (a pointer copy).
//
// A stage, not a poller thread: the reads touch no device (the transceiver poller has its own
// thread because an EEPROM page is a firmware access of tens of ms; a GID table is an in-memory
// cache), so they fit the sampler's budget and are charged to it (ctx.kernel_time: the dump takes
// RTNL on older kernels), and the check sees exactly the devices of the snapshot it is published
// in. docs/gids.md, "Why a sample stage".

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/addresses.h"
#include "exporter/core/fault_log.h"
#include "exporter/core/gid_state.h"
#include "exporter/sampling/gid_check.h"
#include "exporter/sampling/sampler.h"

namespace roceqos {

class GidStage : public SampleStage {
 public:
  using AddressDump = std::function<Result<std::vector<IfAddress>>()>;

  GidStage(std::chrono::nanoseconds interval, AddressDump dump, GidReaders readers);

  std::string_view Source() const override { return "gids"; }
  void Run(StageContext& ctx, Snapshot& draft) override;

 private:
  /// Logs each address that starts lacking a RoCE v2 GID (warn, naming it) and each that has one
  /// again (info): once per change, not per round.
  void NoteMissing(const GidState& state);

  std::chrono::nanoseconds interval_;
  AddressDump dump_;
  GidReaders readers_;
  FaultLog fault_log_;
  std::shared_ptr<const GidState> latest_;
  std::optional<std::chrono::nanoseconds> read_at_;
  std::set<std::string> logged_missing_;
};

/// The stage on the kernel: an AddressCollector (opened at the first round, so a failure to open
/// is a counted, logged error like any failed dump) and the GID tables under `sysfs_root`.
std::unique_ptr<GidStage> MakeKernelGidStage(std::chrono::nanoseconds interval,
                                             const std::string& sysfs_root);

}  // namespace roceqos
