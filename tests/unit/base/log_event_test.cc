#include "base/log_event.h"

#include <gtest/gtest.h>

#include <string>

namespace roceqos {
namespace {

TEST(LogEvent, FieldsSurviveTheRoundTripAndCannotBeForged) {
  const std::string payload = EncodeLogRecord("drift", {{"netdev",
                                                         "eth0\x1e"
                                                         "evil\x1f"
                                                         "1"},
                                                        {"errno", 5}});
  const DecodedLogRecord record = DecodeLogRecord(payload);
  EXPECT_EQ(record.msg, "drift");
  ASSERT_EQ(record.fields.size(), 2u);
  EXPECT_EQ(record.fields[0].key, "netdev");
  EXPECT_EQ(record.fields[0].value, "eth0?evil?1");
  EXPECT_FALSE(record.fields[0].literal);
  EXPECT_EQ(record.fields[1].key, "errno");
  EXPECT_EQ(record.fields[1].value, "5");
  EXPECT_TRUE(record.fields[1].literal);
}

}  // namespace
}  // namespace roceqos
