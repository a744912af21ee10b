#include "exporter/sampling/gid_stage.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "base/log_event.h"
#include "exporter/core/error_reason.h"

namespace roceqos {
namespace {

std::string MissKey(const GidMiss& m) {
  return fmt::format("{} {} {}", m.netdev, m.address, NameOf(kGidMissReasonNames, m.reason));
}

}  // namespace

GidStage::GidStage(std::chrono::nanoseconds interval, AddressDump dump, GidReaders readers)
    : interval_(interval), dump_(std::move(dump)), readers_(std::move(readers)) {}

void GidStage::Run(StageContext& ctx, Snapshot& draft) {
  if (read_at_ && ctx.now - *read_at_ < interval_) {
    draft.gids = latest_;
    return;
  }
  read_at_ = ctx.now;  // a failed round is retried at the next interval, not every sample
  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<IfAddress>> addresses = dump_();
  std::vector<const Device*> devices;
  for (const DeviceSnapshot& d : draft.devices)
    if (d.device) devices.push_back(d.device.get());
  GidRound round;
  if (addresses) round = CheckDeviceGids(devices, *addresses, readers_);
  ctx.kernel_time += std::chrono::steady_clock::now() - start;
  if (!addresses) {
    latest_.reset();  // no stale verdicts: the families are absent until a dump succeeds
    ctx.errors.push_back(ReasonOf(addresses.error()));
    fault_log_.Fault("gids addresses", ReasonName(ReasonOf(addresses.error())),
                     addresses.error().message);
    draft.gids = nullptr;
    return;
  }
  fault_log_.Ok("gids addresses");
  for (const Error& error : round.errors) {
    ctx.errors.push_back(ReasonOf(error));
    fault_log_.Fault("gids table", ReasonName(ReasonOf(error)), error.message);
  }
  if (round.errors.empty()) fault_log_.Ok("gids table");
  round.state.interval_seconds = std::chrono::duration<double>(interval_).count();
  NoteMissing(round.state);
  latest_ = std::make_shared<const GidState>(std::move(round.state));
  draft.gids = latest_;
}

void GidStage::NoteMissing(const GidState& state) {
  std::set<std::string> now;
  for (const auto& [netdev, check] : state.netdevs) {
    for (const GidMiss& m : check.missing) {
      const std::string key = MissKey(m);
      now.insert(key);
      if (logged_missing_.count(key) != 0) continue;
      LogEvent(spdlog::level::warn, "address without a RoCE v2 GID",
               {{"netdev", m.netdev},
                {"address", m.address},
                {"reason", NameOf(kGidMissReasonNames, m.reason)},
                {"gid_netdev", m.gid_netdev}});
    }
  }
  for (const std::string& key : logged_missing_)
    if (now.count(key) == 0)
      LogEvent(spdlog::level::info, "address has a RoCE v2 GID again", {{"address", key}});
  logged_missing_ = std::move(now);
}

std::unique_ptr<GidStage> MakeKernelGidStage(std::chrono::nanoseconds interval,
                                             const std::string& sysfs_root) {
  auto collector = std::make_shared<std::unique_ptr<AddressCollector>>();
  GidStage::AddressDump dump = [collector]() -> Result<std::vector<IfAddress>> {
    if (!*collector) {
      Result<std::unique_ptr<AddressCollector>> opened = AddressCollector::Open();
      if (!opened) return opened.error();
      *collector = std::move(*opened);
    }
    return (*collector)->Dump();
  };
  return std::make_unique<GidStage>(interval, std::move(dump), KernelGidReaders(sysfs_root));
}

}  // namespace roceqos
