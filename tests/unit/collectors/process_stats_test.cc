#include "collectors/process_stats.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <string>

namespace roceqos {
namespace {

// proc(5) layout as Linux 6.1 writes it; the command name holds a space and a ')' on purpose.
constexpr std::string_view kStat =
    "4242 (roce qos) x) S 1 4242 4242 0 -1 4194560 2113 0 0 0 "
    "137 42 0 0 20 0 5 0 987654 187654144 2361 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 "
    "3 0 0 0 0 0\n";

constexpr std::string_view kStatus =
    "Name:\troce_qos_export\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t  190000 kB\n"
    "VmSize:\t  183256 kB\nVmLck:\t       0 kB\nVmRSS:\t    9444 kB\nThreads:\t5\n";

constexpr std::string_view kLimits =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max cpu time              unlimited            unlimited            seconds   \n"
    "Max open files            1024                 524288               files     \n"
    "Max locked memory         8388608              8388608              bytes     \n";

TEST(ProcessStats, StatFieldsAreCountedFromTheLastParenthesis) {
  auto times = ParseProcStat(kStat);
  ASSERT_TRUE(times.ok()) << times.error().message;
  EXPECT_EQ(times->utime_ticks, 137u);
  EXPECT_EQ(times->stime_ticks, 42u);
  EXPECT_EQ(times->starttime_ticks, 987654u);
}

TEST(ProcessStats, StatusGivesResidentAndVirtualBytes) {
  auto memory = ParseProcStatus(kStatus);
  ASSERT_TRUE(memory.ok()) << memory.error().message;
  EXPECT_EQ(memory->resident_bytes, 9444u * 1024);
  EXPECT_EQ(memory->virtual_bytes, 183256u * 1024);
}

TEST(ProcessStats, LimitsGiveTheSoftOpenFilesLimit) {
  auto max = ParseMaxOpenFiles(kLimits);
  ASSERT_TRUE(max.ok()) << max.error().message;
  EXPECT_EQ(*max, 1024);
  auto unlimited = ParseMaxOpenFiles(
      "Max open files            unlimited            unlimited            files     \n");
  ASSERT_TRUE(unlimited.ok()) << unlimited.error().message;
  EXPECT_TRUE(std::isinf(*unlimited));
}

TEST(ProcessStats, BootTimeFromProcStat) {
  auto boot = ParseBootTime("cpu  1 2 3\nintr 5\nctxt 77\nbtime 1764288000\nprocesses 9\n");
  ASSERT_TRUE(boot.ok()) << boot.error().message;
  EXPECT_EQ(*boot, 1764288000u);
}

// Bad input is an Error that says what is wrong, never a crash or a made-up value.
TEST(ProcessStats, MalformedInputIsAClearError) {
  struct Case {
    std::string_view what;
    Result<bool> (*parse)(std::string_view);
    std::string_view input;
    std::string_view message;
  };
  auto stat = [](std::string_view t) -> Result<bool> {
    auto r = ParseProcStat(t);
    return r ? Result<bool>(true) : Result<bool>(r.error());
  };
  auto status = [](std::string_view t) -> Result<bool> {
    auto r = ParseProcStatus(t);
    return r ? Result<bool>(true) : Result<bool>(r.error());
  };
  auto limits = [](std::string_view t) -> Result<bool> {
    auto r = ParseMaxOpenFiles(t);
    return r ? Result<bool>(true) : Result<bool>(r.error());
  };
  auto btime = [](std::string_view t) -> Result<bool> {
    auto r = ParseBootTime(t);
    return r ? Result<bool>(true) : Result<bool>(r.error());
  };
  const Case cases[] = {
      {"empty stat", stat, "", "stat: no \")\" after the command name"},
      {"truncated stat", stat, "1 (x) S 1 2 3", "stat: 4 fields after the command name"},
      {"letters in utime", stat, "1 (x) S 1 1 1 0 -1 0 0 0 0 0 abc 42 0 0 20 0 5 0 987654 1 2\n",
       "stat: utime, stime or starttime not a number"},
      {"negative starttime", stat, "1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 42 0 0 20 0 5 0 -7 1 2\n",
       "stat: utime, stime or starttime not a number"},
      {"no VmRSS", status, "VmSize:\t1 kB\n", "status: no \"VmRSS:\" line"},
      {"VmRSS without unit", status, "VmRSS:\t12\nVmSize:\t1 kB\n",
       "status: \"VmRSS:\" is not \"<number> kB\""},
      {"VmSize overflows", status, "VmRSS:\t1 kB\nVmSize:\t18446744073709551615 kB\n",
       "status: \"VmSize:\" is not \"<number> kB\""},
      {"no open files line", limits, "Max cpu time unlimited unlimited seconds\n",
       "limits: no \"Max open files\" line"},
      {"open files garbage", limits, "Max open files            many   1  files\n",
       "limits: soft \"Max open files\" is not a number"},
      {"open files short", limits, "Max open files 1024\n",
       "limits: \"Max open files\" is not \"<soft> <hard> files\""},
      {"no btime", btime, "cpu 1 2 3\n", "stat: no \"btime\" line"},
      {"btime garbage", btime, "btime 12x\n", "stat: \"btime\" is not a number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.what));
    Result<bool> r = c.parse(c.input);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message.substr(0, c.message.size()), c.message);
  }
}

// The real files of the test process: every figure is plausible and the start is in the past.
TEST(ProcessStats, ReadsTheCallingProcess) {
  auto stats = ReadProcessStats();
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_GT(stats->resident_bytes, 0);
  EXPECT_GE(stats->virtual_bytes, stats->resident_bytes);
  EXPECT_GE(stats->open_fds, 3);  // stdin, stdout, stderr at least
  EXPECT_GE(stats->max_fds, stats->open_fds);
  EXPECT_GE(stats->cpu_seconds, 0);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LE(stats->start_time_seconds, now + 1);
  EXPECT_GT(stats->start_time_seconds, now - 24 * 3600.0);  // this test binary started today
}

TEST(ProcessStats, MissingProcfsNamesThePath) {
  auto stats = ReadProcessStats("/nonexistent-procfs");
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.error().message, "open /nonexistent-procfs/self/stat: No such file or directory");
  EXPECT_EQ(stats.error().errnum, ENOENT);
}

}  // namespace
}  // namespace roceqos
