#include "exporter/core/periodic_thread.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>

namespace roceqos {
namespace {

using std::chrono::hours;

// Counts rounds and lets the test wait for a number of them without sleeping.
struct Rounds {
  std::mutex mu;
  std::condition_variable cv;
  int count = 0;
  void Add() {
    {
      std::lock_guard lock(mu);
      ++count;
    }
    cv.notify_all();
  }
  bool WaitFor(int n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return count >= n; });
  }
};

TEST(PeriodicThreadTest, RunsARoundAtOnceAndStopWakesTheWait) {
  Rounds rounds;
  PeriodicThread thread("test-periodic", hours(1), [&] { rounds.Add(); }, {});
  thread.Start();
  ASSERT_TRUE(rounds.WaitFor(1));
  const auto before = std::chrono::steady_clock::now();
  thread.Stop();  // the hour-long wait ends now, not in an hour
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
  EXPECT_EQ(rounds.count, 1);
}

TEST(PeriodicThreadTest, AnExceptionLosesTheRoundNotTheThread) {
  Rounds rounds;
  std::atomic<int> exceptions{0};
  PeriodicThread thread(
      "test-periodic", std::chrono::milliseconds(1),
      [&] {
        rounds.Add();
        throw std::runtime_error("round failed");
      },
      [&](const std::exception& e) {
        EXPECT_STREQ(e.what(), "round failed");
        ++exceptions;
      });
  thread.Start();
  ASSERT_TRUE(rounds.WaitFor(3));
  thread.Stop();
  EXPECT_GE(exceptions.load(), 2);
}

TEST(PeriodicThreadTest, StartIsIdempotentAndRestartsAfterStop) {
  Rounds rounds;
  PeriodicThread thread("test-periodic", hours(1), [&] { rounds.Add(); }, {});
  thread.Start();
  thread.Start();
  ASSERT_TRUE(rounds.WaitFor(1));
  thread.Stop();
  thread.Start();
  ASSERT_TRUE(rounds.WaitFor(2));
  thread.Stop();
  EXPECT_EQ(rounds.count, 2);
}

TEST(PeriodicThreadTest, TheRoundsRunOnAThreadCarryingItsName) {
  Rounds rounds;
  std::string seen;
  PeriodicThread thread(
      "roceqos-xcvr", hours(1),
      [&] {
        std::array<char, 16> name{};
        pthread_getname_np(pthread_self(), name.data(), name.size());
        seen = name.data();  // written before Add, read after WaitFor: ordered by the mutex
        rounds.Add();
      },
      {});
  thread.Start();
  ASSERT_TRUE(rounds.WaitFor(1));
  thread.Stop();
  EXPECT_EQ(seen, "roceqos-xcvr");
}

}  // namespace
}  // namespace roceqos
