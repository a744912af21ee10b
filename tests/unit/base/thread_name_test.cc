#include "base/thread_name.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <array>
#include <string>
#include <string_view>
#include <thread>

namespace roceqos {
namespace {

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
