#include "base/result.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace roceqos {
namespace {

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

}  // namespace
}  // namespace roceqos
