#include "exporter/core/fault_log.h"

#include <gtest/gtest.h>

namespace roceqos {
namespace {

using Action = FaultLogLimiter::Action;
using std::chrono::milliseconds;
using std::chrono::minutes;

class FaultLogLimiterTest : public ::testing::Test {
 protected:
  FaultLogLimiter limiter_{minutes(5)};
  FaultLogLimiter::Clock::time_point t0_{};
};

TEST_F(FaultLogLimiterTest, LogsAFaultOnceThenAtMostOncePerInterval) {
  EXPECT_EQ(limiter_.Fault("ethtool eth0", "busy", t0_).action, Action::kFault);
  // Every 250 ms sample for almost five minutes: nothing logged.
  int logged = 0;
  for (auto t = t0_ + milliseconds(250); t < t0_ + minutes(5); t += milliseconds(250)) {
    if (limiter_.Fault("ethtool eth0", "busy", t).action != Action::kNone) ++logged;
  }
  EXPECT_EQ(logged, 0);
  FaultLogLimiter::Decision repeat = limiter_.Fault("ethtool eth0", "busy", t0_ + minutes(5));
  EXPECT_EQ(repeat.action, Action::kRepeat);
  EXPECT_EQ(repeat.suppressed, 5u * 60 * 4 - 1) << "the repeat line says how much was skipped";
  EXPECT_EQ(limiter_.Fault("ethtool eth0", "busy", t0_ + minutes(5) + milliseconds(250)).action,
            Action::kNone);
}

TEST_F(FaultLogLimiterTest, AChangedReasonIsLoggedAtOnce) {
  EXPECT_EQ(limiter_.Fault("rdma", "unavailable", t0_).action, Action::kFault);
  EXPECT_EQ(limiter_.Fault("rdma", "unavailable", t0_ + milliseconds(1)).action, Action::kNone);
  EXPECT_EQ(limiter_.Fault("rdma", "permission", t0_ + milliseconds(2)).action, Action::kFault);
}

TEST_F(FaultLogLimiterTest, RecoveryIsLoggedOnceAndResetsTheState) {
  EXPECT_EQ(limiter_.Ok("eth0", t0_).action, Action::kNone) << "never failed: nothing to say";
  limiter_.Fault("eth0", "busy", t0_);
  limiter_.Fault("eth0", "busy", t0_ + milliseconds(1));
  FaultLogLimiter::Decision ok = limiter_.Ok("eth0", t0_ + milliseconds(2));
  EXPECT_EQ(ok.action, Action::kRecovered);
  EXPECT_EQ(ok.suppressed, 1u);
  EXPECT_EQ(limiter_.Ok("eth0", t0_ + milliseconds(3)).action, Action::kNone);
  EXPECT_EQ(limiter_.Fault("eth0", "busy", t0_ + milliseconds(4)).action, Action::kFault)
      << "a new fault after recovery is news again";
}

TEST_F(FaultLogLimiterTest, KeysAreIndependentAndForgettable) {
  limiter_.Fault("a", "busy", t0_);
  EXPECT_EQ(limiter_.Fault("b", "busy", t0_).action, Action::kFault);
  EXPECT_EQ(limiter_.faulty_keys(), 2u);
  limiter_.Forget("a");
  EXPECT_EQ(limiter_.faulty_keys(), 1u);
  EXPECT_EQ(limiter_.Ok("a", t0_).action, Action::kNone);
}

}  // namespace
}  // namespace roceqos
