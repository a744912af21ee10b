#include "exporter/sampling/gid_stage.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <vector>

#include "tests/unit/support/rdma_port.h"
#include "tests/unit/support/recorded_addresses.h"

namespace roceqos {
namespace {

using testing::PortOf;

using std::chrono::seconds;

constexpr const char* kGid192 = "0000:0000:0000:0000:0000:ffff:c000:0201";  // 192.0.2.1

class GidStageTest : public ::testing::Test {
 protected:
  GidStageTest() {
    auto device = std::make_shared<Device>();
    device->name = "rq0";
    device->ifindex = testing::kRecordedRq0;
    device->rdma_ports = {PortOf("rxe0", "rq0")};
    device_ = device;
  }
  std::unique_ptr<GidStage> MakeStage() {
    GidReaders readers{[this](const RdmaPort&) {
                         return Observed<std::vector<RoceGid>>::Ok({{0, kGid192, type_, "rq0"}});
                       },
                       [](const std::string&) { return std::nullopt; }};
    return std::make_unique<GidStage>(
        seconds(60),
        [this]() -> Result<std::vector<IfAddress>> {
          ++dumps_;
          if (dump_fails_) return MakeError(EPERM, "RTM_GETADDR dump: refused");
          return testing::RecordedAddresses();
        },
        std::move(readers));
  }
  Snapshot Run(GidStage& stage, std::chrono::nanoseconds now, StageContext* out = nullptr) {
    Snapshot draft;
    DeviceSnapshot device;
    device.device = device_;
    draft.devices.push_back(device);
    StageContext ctx;
    ctx.now = now;
    stage.Run(ctx, draft);
    if (out != nullptr) *out = ctx;
    return draft;
  }

  std::shared_ptr<const Device> device_;
  GidType type_ = GidType::kRoceV2;
  bool dump_fails_ = false;
  int dumps_ = 0;
};

TEST_F(GidStageTest, ChecksOncePerIntervalAndCarriesTheResultBetween) {
  auto stage = MakeStage();
  const Snapshot first = Run(*stage, seconds(100));
  ASSERT_TRUE(first.gids);
  // 192.0.2.1 has its GID; 2001:db8::1 (the other settled address of rq0) has none.
  const NetdevGidCheck& check = first.gids->netdevs.at("rq0");
  ASSERT_EQ(check.missing.size(), 1u);
  EXPECT_EQ(check.missing[0].address, "2001:db8::1");
  EXPECT_EQ(first.gids->interval_seconds, 60);

  type_ = GidType::kIbRoceV1;  // a change the next round would see
  const Snapshot carried = Run(*stage, seconds(159));
  EXPECT_EQ(carried.gids, first.gids);
  EXPECT_EQ(dumps_, 1);

  const Snapshot next = Run(*stage, seconds(160));
  EXPECT_EQ(dumps_, 2);
  EXPECT_EQ(next.gids->netdevs.at("rq0").Missing(AddressFamily::kIpv4, GidMissReason::kV1Only), 1u);
}

TEST_F(GidStageTest, AFailedDumpLeavesNoVerdictAndCountsAnError) {
  auto stage = MakeStage();
  ASSERT_TRUE(Run(*stage, seconds(0)).gids);
  dump_fails_ = true;
  StageContext ctx;
  const Snapshot failed = Run(*stage, seconds(60), &ctx);
  EXPECT_FALSE(failed.gids);
  ASSERT_EQ(ctx.errors.size(), 1u);
  EXPECT_EQ(ctx.errors[0], ErrorReason::kPermission);
  EXPECT_FALSE(Run(*stage, seconds(61)).gids);  // not carried, and not retried before the interval
  EXPECT_EQ(dumps_, 2);
}

}  // namespace
}  // namespace roceqos
