#include <gtest/gtest.h>
#include <pthread.h>

#include <array>
#include <cerrno>
#include <string>
#include <thread>

#include "base/enum_names.h"
#include "base/log_event.h"
#include "base/result.h"
#include "base/thread_name.h"

namespace roceqos {
namespace {

enum class Colour : uint8_t { kRed, kGreen, kBlue };
constexpr EnumName<Colour> kColourNames[] = {{Colour::kRed, "red"}, {Colour::kGreen, "green"}};

TEST(EnumNames, LooksUpBothWaysAndFallsBackForValuesTheTableLacks) {
  EXPECT_EQ(NameOf(kColourNames, Colour::kGreen), "green");
  EXPECT_EQ(NameOf(kColourNames, Colour::kBlue), "unknown");
  EXPECT_EQ(NameOf(kColourNames, Colour::kBlue, "?"), "?");
  EXPECT_EQ(ValueOf(kColourNames, "red"), Colour::kRed);
  EXPECT_EQ(ValueOf(kColourNames, "Red"), std::nullopt);  // names are exact
}

TEST(Result, HoldsAValueOrAnErrorWithItsErrno) {
  Result<int> ok = 7;
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 7);
  Result<int> failed = MakeError(EOPNOTSUPP, "RTM_GETDCB eth0: not supported");
  ASSERT_FALSE(failed);
  EXPECT_TRUE(failed.error().NotSupported());
  EXPECT_EQ(failed.error().message, "RTM_GETDCB eth0: not supported");
  EXPECT_FALSE(Result<void>(MakeError(EIO, "read")).error().NotSupported());
  EXPECT_TRUE(Result<void>());
}

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

std::string NameOfThreadNamed(std::string_view name) {
  std::array<char, 32> seen{};
  std::thread t([&] {
    NameCurrentThread(name);
    pthread_getname_np(pthread_self(), seen.data(), seen.size());
  });
  t.join();
  return seen.data();
}

TEST(ThreadName, NamesTheCallingThreadAndCutsToWhatLinuxKeeps) {
  EXPECT_EQ(NameOfThreadNamed("roceqos-sampler"), "roceqos-sampler");
  // 16 characters: pthread_setname_np would refuse it (ERANGE) and leave the old name.
  EXPECT_EQ(NameOfThreadNamed("roceqos-sampler2"), "roceqos-sampler");
}

}  // namespace
}  // namespace roceqos
