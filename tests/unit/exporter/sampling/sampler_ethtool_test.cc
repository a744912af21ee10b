#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/sampling/sampler.h"
#include "tests/unit/support/fake_sources.h"
#include "tests/unit/support/sampler_fixture.h"

// The sampler and the ethtool string set: a new generation is mapped once and counted, the names
// are read again when a stage or a DCB change asks, and raw names are opted into.

namespace roceqos {
namespace {

using ::testing::HasSubstr;
using testing::MakeDevice;
using ::testing::Not;
using testing::Render;

class SamplerEthtoolTest : public testing::SamplerFixture {};

TEST_F(SamplerEthtoolTest, DeviceRecreatedUnderTheSameNameIsForgottenAndRemapped) {
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  Sample();
  inventory_->inventory.devices[0].ifindex = 9;
  sampler_->RequestDiscovery();
  ethtool_->events.clear();
  Sample();
  EXPECT_THAT(ethtool_->events,
              ::testing::ElementsAre("names ens1f0np0", "sample ens1f0np0", "names ens1f0np0"))
      << "a new ifindex may come with another string set: its names are read again";
}

TEST_F(SamplerEthtoolTest, StringSetGenerationChangeIsRemappedOnceAndCounted) {
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_bytes", "rx_prio3_pause", "tx_prio3_pause"});
  std::shared_ptr<const Snapshot> s1 = Sample();
  std::shared_ptr<const Snapshot> s2 = Sample();
  ASSERT_TRUE(s1->devices[0].ethtool && s2->devices[0].ethtool);
  EXPECT_EQ(s1->devices[0].ethtool->mapped, s2->devices[0].ethtool->mapped)
      << "the mapping is computed once per generation and shared";
  EXPECT_EQ(s2->devices[0].ethtool->string_set_changes, 0u);

  // PFC enabled on priority 4 too: mlx5 inserts that priority's pause counters.
  ethtool_->SetNames("ens1f0np0", {"rx_bytes", "rx_prio3_pause", "tx_prio3_pause", "rx_prio4_pause",
                                   "tx_prio4_pause"});
  ethtool_->SetValue("ens1f0np0", "rx_prio4_pause", 7);
  std::shared_ptr<const Snapshot> s3 = Sample();
  const EthtoolSample& e3 = *s3->devices[0].ethtool;
  EXPECT_NE(e3.mapped, s2->devices[0].ethtool->mapped);
  EXPECT_EQ(e3.mapped->size(), 4u);
  EXPECT_EQ(e3.string_set_changes, 1u);
  const std::string text = Render(*s3);
  EXPECT_THAT(
      text,
      HasSubstr("roce_pfc_pause_frames_total{netdev=\"ens1f0np0\",prio=\"4\",direction=\"rx\"} 7"));
  EXPECT_THAT(text, HasSubstr("roce_ethtool_string_set_changes_total{netdev=\"ens1f0np0\"} 1"));

  // PFC disabled on 4 again: its series disappear with the names.
  ethtool_->SetNames("ens1f0np0", {"rx_bytes", "rx_prio3_pause", "tx_prio3_pause"});
  std::shared_ptr<const Snapshot> s4 = Sample();
  EXPECT_THAT(Render(*s4), Not(HasSubstr("prio=\"4\"")));
  EXPECT_EQ(s4->devices[0].ethtool->string_set_changes, 2u);
}

TEST_F(SamplerEthtoolTest, ReReadOfAnIdenticalNameSetIsNotAChange) {
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  std::shared_ptr<const Snapshot> s1 = Sample();
  ethtool_->SetNames("ens1f0np0", {"rx_prio3_pause"});  // same content
  const std::vector<std::string> reread{"ens1f0np0"};
  sampler_->Wake(/*discovery=*/false, reread);  // the names are read again
  std::shared_ptr<const Snapshot> s2 = Sample();
  EXPECT_EQ(s2->devices[0].ethtool->string_set_changes, 0u);
  EXPECT_EQ(s1->devices[0].ethtool->mapped, s2->devices[0].ethtool->mapped);
}

TEST_F(SamplerEthtoolTest, ValuesThatNeverMatchTheNamesAreRejectedNotRendered) {
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause", "tx_prio3_pause"});
  ethtool_->entries["ens1f0np0"].values.resize(1);  // GSTATS keeps answering another count
  std::shared_ptr<const Snapshot> s = Sample();
  ASSERT_EQ(s->devices.size(), 1u);
  EXPECT_FALSE(s->devices[0].ethtool.has_value());
  EXPECT_EQ(s->errors.size(), 1u);
  EXPECT_EQ(s->errors.begin()->first.source, "ethtool");
}

TEST_F(SamplerEthtoolTest, RawIncludeExportsOnlyUnmappedMatchingNames) {
  SamplerOptions options;
  options.raw_include = std::regex("rx_.*");
  Build(std::move(options));
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause", "rx_bytes", "tx_bytes", "rx_crc"});
  ethtool_->SetValue("ens1f0np0", "rx_bytes", 1000);
  const std::string text = Render(*Sample());
  EXPECT_THAT(text, HasSubstr("roce_ethtool_stat{netdev=\"ens1f0np0\",stat=\"rx_bytes\"} 1000\n"));
  EXPECT_THAT(text, HasSubstr("stat=\"rx_crc\""));
  EXPECT_THAT(text, Not(HasSubstr("stat=\"tx_bytes\""))) << "not matching";
  EXPECT_THAT(text, Not(HasSubstr("stat=\"rx_prio3_pause\""))) << "mapped: has its own family";
}

TEST_F(SamplerEthtoolTest, StagesCanInvalidateEthtoolNames) {
  class InvalidatingStage : public SampleStage {
   public:
    std::string_view Source() const override { return "qos"; }
    void Run(StageContext& ctx, Snapshot&) override {
      ctx.invalidate_ethtool_names.push_back("ens1f0np0");
    }
  };
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  sampler_->AddStage(std::make_unique<InvalidatingStage>());
  Sample();
  ethtool_->events.clear();
  Sample();
  EXPECT_THAT(ethtool_->events,
              ::testing::ElementsAre("names ens1f0np0", "sample ens1f0np0", "names ens1f0np0"))
      << "the names are read again around the values";
}

TEST_F(SamplerEthtoolTest, WakeForADcbChangeReReadsTheNamesBeforeTheValues) {
  Build();
  AddDevice(MakeDevice("ens1f0np0", 2), {"rx_prio3_pause"});
  AddDevice(MakeDevice("ens1f1np1", 3), {"rx_prio3_pause"});
  Sample();
  ethtool_->events.clear();
  const std::vector<std::string> changed{"ens1f1np1"};
  sampler_->Wake(/*discovery=*/false, changed);
  Sample();
  EXPECT_THAT(ethtool_->events, ::testing::ElementsAre("sample ens1f0np0", "names ens1f1np1",
                                                       "sample ens1f1np1", "names ens1f1np1"));
  ethtool_->events.clear();
  Sample();
  EXPECT_THAT(ethtool_->events, ::testing::ElementsAre("sample ens1f0np0", "sample ens1f1np1"))
      << "applied once";
}

}  // namespace
}  // namespace roceqos
