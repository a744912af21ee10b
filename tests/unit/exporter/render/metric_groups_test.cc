#include "exporter/render/metric_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "exporter/render/metric_table.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;

MetricGroups Group(std::string_view name) { return MetricGroups::Named(name).value(); }

TEST(MetricGroups, EveryAreaOfTheTableIsAGroupAndEveryGroupHasFamilies) {
  std::set<std::string_view> areas;
  for (const MetricDef& d : AllMetrics()) {
    areas.insert(d.area);
    EXPECT_TRUE(MetricGroups::Named(d.area).has_value()) << d.name << ": area " << d.area;
    EXPECT_TRUE(MetricGroups::All().Contains(d.area));
    EXPECT_FALSE(MetricGroups::None().Contains(d.area));
  }
  for (std::string_view g : kMetricGroupNames) EXPECT_TRUE(areas.count(g)) << g << " is empty";
}

TEST(MetricGroups, AGroupContainsItsAreaOnly) {
  const MetricGroups qos = Group("qos");
  EXPECT_TRUE(qos.Contains("qos"));
  EXPECT_FALSE(qos.Contains("self"));
  EXPECT_FALSE(qos.Contains("no such area"));
  EXPECT_FALSE(MetricGroups::Named("QoS").has_value()) << "names are exact";
  EXPECT_FALSE(MetricGroups::Named("").has_value());
}

TEST(CollectGroups, NoCollectParameterSelectsEverything) {
  EXPECT_EQ(CollectGroups("").value(), MetricGroups::All());
  EXPECT_EQ(CollectGroups("foo=bar&x").value(), MetricGroups::All());
}

TEST(CollectGroups, RepeatedParametersUnion) {
  MetricGroups expected = Group("derived");
  expected |= Group("ethtool");
  EXPECT_EQ(CollectGroups("collect[]=derived&collect[]=ethtool").value(), expected);
  EXPECT_EQ(CollectGroups("collect[]=derived&other=1&collect[]=ethtool&collect[]=derived").value(),
            expected);
  EXPECT_EQ(CollectGroups("collect[]=qos").value(), Group("qos"));
}

// Prometheus sends `params: {collect[]: [qos]}` as collect%5B%5D=qos.
TEST(CollectGroups, PercentEncodedNamesAndValuesAreDecoded) {
  EXPECT_EQ(CollectGroups("collect%5B%5D=qos").value(), Group("qos"));
  EXPECT_EQ(CollectGroups("collect%5b%5d=q%6Fs").value(), Group("qos"));
}

TEST(CollectGroups, AnUnknownOrEmptyGroupIsAOneLineError) {
  Result<MetricGroups> bad = CollectGroups("collect[]=qos&collect[]=counterz");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("unknown metric group \"counterz\""));
  EXPECT_THAT(bad.error().message, HasSubstr("ethtool, rdma"));
  EXPECT_FALSE(CollectGroups("collect[]=").ok());
  EXPECT_FALSE(CollectGroups("collect[]").ok());
  EXPECT_FALSE(CollectGroups("collect[]=q%").ok()) << "a stray % stays literal and matches nothing";
  Result<MetricGroups> newline = CollectGroups("collect[]=a%0Ab%22");
  ASSERT_FALSE(newline.ok());
  EXPECT_EQ(newline.error().message.find('\n'), std::string::npos);
  EXPECT_THAT(newline.error().message, HasSubstr("\"a?b\"\""));
  const std::string longer(500, 'x');
  Result<MetricGroups> long_name = CollectGroups("collect[]=" + longer);
  ASSERT_FALSE(long_name.ok());
  EXPECT_LT(long_name.error().message.size(), 300u);
}

}  // namespace
}  // namespace roceqos
