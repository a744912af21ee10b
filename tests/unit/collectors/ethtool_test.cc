#include "collectors/ethtool.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collectors/ethtool_map.h"
#include "tests/unit/support/ethtool_capture.h"
#include "tests/unit/support/netns.h"

namespace roceqos {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

enum class Op { kCount, kNames, kValues, kDriverInfo };

// How the kernel answers a GSTRINGS/GSTATS whose len/n_stats differs from the current count
// (docs/kernel-interfaces.md §4.4).
enum class Kernel {
  kLegacy,   // ignores the request and writes the current set (more or fewer entries)
  kChecked,  // 2025 fix: answers 0 entries
};

std::string KernelName(const ::testing::TestParamInfo<Kernel>& info) {
  return info.param == Kernel::kLegacy ? "LegacyKernel" : "CheckedKernel";
}

// An mlx5 port as ETHTOOL_GSSET_INFO/GSTRINGS/GSTATS see it: the per-priority pause counters exist
// only for priorities in pfc_en, the global ones only while 802.3x pause is on
// (docs/kernel-interfaces.md §3.1), in the driver's group order. Each counter's value is unique to
// its name (plus a tick that advances per GSTATS), so a value paired with the wrong name is
// detected.
class FakeMlx5Io : public EthtoolIo {
 public:
  explicit FakeMlx5Io(Kernel kernel) : kernel_(kernel) {}

  uint8_t pfc_en = 0;
  bool global_pause = false;
  bool present = true;           // false: the netdev is gone (ENODEV)
  bool has_stats = true;         // false: no ETH_SS_STATS set (EOPNOTSUPP)
  int overflow_next_gstats = 0;  // old kernel, set outgrew the buffer: EOVERFLOW this many times
  // Runs before each call is answered, with the index of that call: a test changes the set here.
  std::function<void(size_t call, Op op)> before_call;

  std::vector<Op> calls;
  uint64_t tick = 0;

  std::vector<std::string> CurrentNames() const {
    std::vector<std::string> names = {"rx_packets",
                                      "rx_bytes",
                                      "tx_packets",
                                      "tx_bytes",
                                      "rx_ecn_mark",
                                      "rx_out_of_buffer",
                                      "rx_pause_ctrl_phy",
                                      "tx_pause_ctrl_phy",
                                      "rx_discards_phy",
                                      "tx_discards_phy",
                                      "rx_buffer_passed_thres_phy"};
    for (int prio = 0; prio < 8; ++prio) {
      const std::string p = std::to_string(prio);
      for (const char* format : {"rx_prio%_bytes", "rx_prio%_packets", "rx_prio%_discards",
                                 "tx_prio%_bytes", "tx_prio%_packets"}) {
        names.push_back(Format(format, p));
      }
    }
    const char* const kPfc[] = {"rx_%_pause", "rx_%_pause_duration", "tx_%_pause",
                                "tx_%_pause_duration", "rx_%_pause_transition"};
    for (int prio = 0; prio < 8; ++prio) {
      if ((pfc_en & (1u << prio)) == 0) continue;
      for (const char* format : kPfc)
        names.push_back(Format(format, "prio" + std::to_string(prio)));
    }
    if (global_pause) {
      for (const char* format : kPfc) names.push_back(Format(format, "global"));
    }
    names.insert(names.end(), {"tx_pause_storm_warning_events", "tx_pause_storm_error_events",
                               "ch0_events", "rx0_packets", "tx0_packets"});
    for (int tc = 0; tc < 8; ++tc) {
      const std::string t = std::to_string(tc);
      for (const char* format :
           {"rx_prio%_buf_discard", "rx_prio%_cong_discard", "rx_prio%_marked"}) {
        names.push_back(Format(format, t));
      }
    }
    return names;
  }

  // FNV-1a, shifted so that adding the tick cannot wrap.
  static uint64_t BaseValue(const std::string& name) {
    uint64_t hash = 14695981039346656037ull;
    for (unsigned char c : name) hash = (hash ^ c) * 1099511628211ull;
    return hash >> 16;
  }

  uint64_t ExpectedValue(const std::string& name) const { return BaseValue(name) + tick; }

  Result<uint32_t> StatsCount(const std::string& ifname) override {
    if (auto gone = Enter(Op::kCount, ifname)) return *gone;
    if (!has_stats) return MakeError(EOPNOTSUPP, "ETHTOOL_GSSET_INFO " + ifname + ": no stats");
    return static_cast<uint32_t>(CurrentNames().size());
  }

  Result<std::vector<std::string>> StatsNames(const std::string& ifname, uint32_t count) override {
    if (auto gone = Enter(Op::kNames, ifname)) return *gone;
    auto names = CurrentNames();
    if (Mismatch(count, names.size())) return std::vector<std::string>{};
    return names;
  }

  Result<std::vector<uint64_t>> StatsValues(const std::string& ifname, uint32_t count) override {
    if (auto gone = Enter(Op::kValues, ifname)) return *gone;
    ++tick;
    if (overflow_next_gstats > 0) {
      --overflow_next_gstats;
      return MakeError(EOVERFLOW, "ETHTOOL_GSTATS " + ifname + ": outgrew the buffer");
    }
    const auto names = CurrentNames();
    if (Mismatch(count, names.size())) return std::vector<uint64_t>{};
    std::vector<uint64_t> values;
    for (const auto& name : names) values.push_back(ExpectedValue(name));
    return values;
  }

  Result<DriverInfo> GetDriverInfo(const std::string& ifname) override {
    if (auto gone = Enter(Op::kDriverInfo, ifname)) return *gone;
    return DriverInfo{"mlx5_core", "0000:af:00.0", "14.23.1020"};
  }

 private:
  static std::string Format(std::string format, const std::string& value) {
    format.replace(format.find('%'), 1, value);
    return format;
  }

  bool Mismatch(uint32_t requested, size_t current) const {
    return kernel_ == Kernel::kChecked && requested != 0 && requested != current;
  }

  std::optional<Error> Enter(Op op, const std::string& ifname) {
    if (before_call) before_call(calls.size(), op);
    calls.push_back(op);
    if (!present) return MakeError(ENODEV, "ioctl " + ifname + ": No such device");
    return std::nullopt;
  }

  Kernel kernel_;
};

constexpr char kIf[] = "ens1f0np0";

const std::vector<Op> kFullRead = {Op::kCount, Op::kNames, Op::kValues, Op::kNames};

std::vector<Op> Concat(std::initializer_list<std::vector<Op>> parts) {
  std::vector<Op> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// Every value belongs to the name it is paired with, and the set is the device's current one.
void ExpectPaired(const CounterSet& set, const FakeMlx5Io& io) {
  ASSERT_NE(set.names, nullptr);
  ASSERT_EQ(set.names->size(), set.values.size());
  EXPECT_EQ(*set.names, io.CurrentNames());
  for (size_t i = 0; i < set.values.size(); ++i) {
    EXPECT_EQ(set.values[i], io.ExpectedValue((*set.names)[i])) << "value of " << (*set.names)[i];
  }
}

class EthtoolCollectorTest : public ::testing::TestWithParam<Kernel> {
 protected:
  FakeMlx5Io io_{GetParam()};
};

INSTANTIATE_TEST_SUITE_P(Kernels, EthtoolCollectorTest,
                         ::testing::Values(Kernel::kLegacy, Kernel::kChecked), KernelName);

TEST_P(EthtoolCollectorTest, ReadsTheSetOnceThenOneGstatsPerSample) {
  EthtoolCollector collector(io_);
  auto first = collector.Sample(kIf);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ExpectPaired(*first, io_);
  EXPECT_EQ(io_.calls, kFullRead);
  EXPECT_EQ(collector.Generation(kIf), 1u);

  io_.calls.clear();
  for (int i = 0; i < 20; ++i) {
    auto next = collector.Sample(kIf);
    ASSERT_TRUE(next.ok()) << next.error().message;
    ExpectPaired(*next, io_);
    EXPECT_EQ(next->names.get(), first->names.get()) << "names are shared within a generation";
  }
  EXPECT_EQ(io_.calls, std::vector<Op>(20, Op::kValues));
  EXPECT_EQ(collector.Generation(kIf), 1u);
}

TEST_P(EthtoolCollectorTest, RevalidatesTheNamesAfterEveryNthGstats) {
  EthtoolCollector collector(io_, {.revalidate_every = 5});
  ASSERT_TRUE(collector.Sample(kIf).ok());
  io_.calls.clear();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(collector.Sample(kIf).ok());
  const std::vector<Op> five = {Op::kValues, Op::kValues, Op::kValues,
                                Op::kValues, Op::kValues, Op::kNames};
  EXPECT_EQ(io_.calls, Concat({five, five}));
  EXPECT_EQ(collector.Generation(kIf), 1u);
}

TEST_P(EthtoolCollectorTest, PfcEnabledBetweenSamplesGrowsTheSet) {
  EthtoolCollector collector(io_);
  auto before = collector.Sample(kIf);
  ASSERT_TRUE(before.ok());
  EXPECT_THAT(*before->names, Not(Contains("rx_prio3_pause")));

  io_.pfc_en = 1u << 3;  // mlnx_qos --pfc 0,0,0,1,0,0,0,0
  io_.calls.clear();
  auto after = collector.Sample(kIf);
  ASSERT_TRUE(after.ok()) << after.error().message;
  ExpectPaired(*after, io_);
  EXPECT_EQ(after->size(), before->size() + 5);
  EXPECT_EQ(io_.calls, Concat({{Op::kValues}, kFullRead}));
  EXPECT_EQ(collector.Generation(kIf), 2u);

  // The new names map: the paired value of rx_prio3_pause is the one the device reported for it.
  bool found = false;
  for (const MappedCounter& mapped : MapMlx5EthtoolNames(*after->names)) {
    if (mapped.counter != PortCounter::kPauseFrames) continue;
    EXPECT_EQ(mapped.index, 3);
    if (mapped.direction == Direction::kRx) {
      EXPECT_EQ(after->values[mapped.source_index], io_.ExpectedValue("rx_prio3_pause"));
      found = true;
    }
  }
  EXPECT_TRUE(found);

  io_.calls.clear();
  ASSERT_TRUE(collector.Sample(kIf).ok());
  EXPECT_EQ(io_.calls, std::vector<Op>{Op::kValues}) << "steady again after the re-read";
}

TEST_P(EthtoolCollectorTest, PfcAndPauseDisabledBetweenSamplesShrinksTheSet) {
  io_.pfc_en = (1u << 3) | (1u << 4);
  io_.global_pause = true;
  EthtoolCollector collector(io_);
  auto before = collector.Sample(kIf);
  ASSERT_TRUE(before.ok());

  io_.pfc_en = 0;
  io_.global_pause = false;
  auto after = collector.Sample(kIf);
  ASSERT_TRUE(after.ok()) << after.error().message;
  ExpectPaired(*after, io_);
  EXPECT_EQ(after->size(), before->size() - 15);
  EXPECT_EQ(collector.Generation(kIf), 2u);
}

// Mutations of the set, each applied once at a chosen point between two ioctls.
struct Change {
  const char* name;
  uint8_t pfc_before;
  uint8_t pfc_after;
};
const Change kChanges[] = {
    {"grows", 1u << 3, (1u << 3) | (1u << 5)},
    {"shrinks", (1u << 3) | (1u << 5), 1u << 3},
    {"reorders", 1u << 3, 1u << 4},  // same count, other names: PFC moved to priority 4
};

TEST_P(EthtoolCollectorTest, SetChangesBetweenGstringsAndGstats) {
  for (const Change& change : kChanges) {
    SCOPED_TRACE(change.name);
    FakeMlx5Io io(GetParam());
    io.pfc_en = change.pfc_before;
    io.before_call = [&](size_t call, Op op) {
      if (call == 2) {
        ASSERT_EQ(op, Op::kValues);
        io.pfc_en = change.pfc_after;
      }
    };
    EthtoolCollector collector(io);
    auto sample = collector.Sample(kIf);
    ASSERT_TRUE(sample.ok()) << sample.error().message;
    ExpectPaired(*sample, io);
    EXPECT_EQ(collector.Generation(kIf), 1u) << "only the settled set is adopted";
    EXPECT_GT(io.calls.size(), kFullRead.size()) << "the first read must have been discarded";
  }
}

TEST_P(EthtoolCollectorTest, SetChangesBetweenGssetInfoAndGstrings) {
  for (const Change& change : kChanges) {
    SCOPED_TRACE(change.name);
    FakeMlx5Io io(GetParam());
    io.pfc_en = change.pfc_before;
    io.before_call = [&](size_t call, Op op) {
      if (call == 1) {
        ASSERT_EQ(op, Op::kNames);
        io.pfc_en = change.pfc_after;
      }
    };
    EthtoolCollector collector(io);
    auto sample = collector.Sample(kIf);
    ASSERT_TRUE(sample.ok()) << sample.error().message;
    ExpectPaired(*sample, io);
    EXPECT_EQ(collector.Generation(kIf), 1u);
  }
}

TEST_P(EthtoolCollectorTest, SetChangesDuringTheRefreshOfASteadyDevice) {
  for (const Change& change : kChanges) {
    SCOPED_TRACE(change.name);
    FakeMlx5Io io(GetParam());
    io.pfc_en = change.pfc_before;
    EthtoolCollector collector(io);
    ASSERT_TRUE(collector.Sample(kIf).ok());
    const auto names_before = io.CurrentNames();

    // Global pause switched on before the steady GSTATS (count changes), then the PFC change lands
    // between the refresh's GSTRINGS and its GSTATS.
    io.global_pause = true;
    io.calls.clear();
    io.before_call = [&](size_t call, Op) {
      if (call == 3) io.pfc_en = change.pfc_after;  // Values, Count, Names, >here< Values
    };
    auto sample = collector.Sample(kIf);
    ASSERT_TRUE(sample.ok()) << sample.error().message;
    ExpectPaired(*sample, io);
    EXPECT_NE(*sample->names, names_before);
    EXPECT_EQ(collector.Generation(kIf), 2u);
  }
}

TEST_P(EthtoolCollectorTest, SameCountReorderIsCaughtByInvalidate) {
  io_.pfc_en = 1u << 3;
  EthtoolCollector collector(io_);
  ASSERT_TRUE(collector.Sample(kIf).ok());

  io_.pfc_en = 1u << 4;  // same count: no GSTATS answer can reveal this
  collector.Invalidate(kIf);
  io_.calls.clear();
  auto sample = collector.Sample(kIf);
  ASSERT_TRUE(sample.ok());
  ExpectPaired(*sample, io_);
  EXPECT_THAT(*sample->names, Contains("rx_prio4_pause"));
  EXPECT_EQ(io_.calls, kFullRead);
  EXPECT_EQ(collector.Generation(kIf), 2u);
}

TEST_P(EthtoolCollectorTest, SameCountReorderIsCaughtByPeriodicRevalidation) {
  io_.pfc_en = 1u << 3;
  EthtoolCollector collector(io_, {.revalidate_every = 3});
  ASSERT_TRUE(collector.Sample(kIf).ok());
  ASSERT_TRUE(collector.Sample(kIf).ok());
  ASSERT_TRUE(collector.Sample(kIf).ok());
  io_.pfc_en = 1u << 4;
  // The third steady sample is due: its GSTATS is followed by GSTRINGS, which no longer matches,
  // so its values are dropped and the set is read again.
  io_.calls.clear();
  auto sample = collector.Sample(kIf);
  ASSERT_TRUE(sample.ok());
  ExpectPaired(*sample, io_);
  EXPECT_EQ(io_.calls, Concat({{Op::kValues, Op::kNames}, kFullRead}));
  EXPECT_EQ(collector.Generation(kIf), 2u);
}

TEST_P(EthtoolCollectorTest, GenerationChangesExactlyWhenTheSetChanges) {
  EthtoolCollector collector(io_);
  auto first = collector.Sample(kIf);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(collector.Generation(kIf), 1u);

  collector.Invalidate(kIf);  // re-read, same set
  auto same = collector.Sample(kIf);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(collector.Generation(kIf), 1u);
  EXPECT_EQ(same->names.get(), first->names.get());

  io_.pfc_en = 1u << 3;
  ASSERT_TRUE(collector.Sample(kIf).ok());
  EXPECT_EQ(collector.Generation(kIf), 2u);

  io_.pfc_en = 0;  // back to the first set: still a change, and a new generation
  auto back = collector.Sample(kIf);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(collector.Generation(kIf), 3u);
  EXPECT_EQ(*back->names, *first->names);
}

TEST_P(EthtoolCollectorTest, GenerationsAreUniqueAcrossDevices) {
  EthtoolCollector collector(io_);
  ASSERT_TRUE(collector.Sample("eth0").ok());
  ASSERT_TRUE(collector.Sample("eth1").ok());
  EXPECT_EQ(collector.Generation("eth0"), 1u);
  EXPECT_EQ(collector.Generation("eth1"), 2u);
  EXPECT_EQ(collector.Generation("eth2"), 0u);
}

TEST_P(EthtoolCollectorTest, VanishedDeviceIsAnErrorAndIsForgotten) {
  EthtoolCollector collector(io_);
  ASSERT_TRUE(collector.Sample(kIf).ok());
  const uint64_t generation = collector.Generation(kIf);

  io_.present = false;
  auto gone = collector.Sample(kIf);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().errnum, ENODEV);
  EXPECT_THAT(gone.error().message, HasSubstr(kIf));
  EXPECT_EQ(collector.Generation(kIf), 0u);

  // A device that comes back under the same name is read from scratch, with a new generation.
  io_.present = true;
  io_.calls.clear();
  auto back = collector.Sample(kIf);
  ASSERT_TRUE(back.ok());
  ExpectPaired(*back, io_);
  EXPECT_EQ(io_.calls, kFullRead);
  EXPECT_GT(collector.Generation(kIf), generation);
}

TEST_P(EthtoolCollectorTest, VanishingDuringTheRefreshIsAnError) {
  EthtoolCollector collector(io_);
  io_.before_call = [&](size_t call, Op) {
    if (call == 2) io_.present = false;  // between GSTRINGS and GSTATS
  };
  auto sample = collector.Sample(kIf);
  ASSERT_FALSE(sample.ok());
  EXPECT_EQ(sample.error().errnum, ENODEV);
  EXPECT_EQ(collector.Generation(kIf), 0u);
}

TEST_P(EthtoolCollectorTest, ForgetDropsTheCache) {
  EthtoolCollector collector(io_);
  ASSERT_TRUE(collector.Sample(kIf).ok());
  collector.Forget(kIf);
  EXPECT_EQ(collector.Generation(kIf), 0u);
  io_.calls.clear();
  ASSERT_TRUE(collector.Sample(kIf).ok());
  EXPECT_EQ(io_.calls, kFullRead);
}

TEST_P(EthtoolCollectorTest, SetThatNeverSettlesGivesEagainWithoutValues) {
  EthtoolCollector collector(io_);
  io_.before_call = [&](size_t, Op) { io_.pfc_en ^= 1u << 2; };  // flaps on every ioctl
  auto sample = collector.Sample(kIf);
  ASSERT_FALSE(sample.ok());
  EXPECT_EQ(sample.error().errnum, EAGAIN);
  EXPECT_THAT(sample.error().message, HasSubstr(kIf));
  EXPECT_LE(io_.calls.size(), 12u) << "bounded retries";
  EXPECT_EQ(collector.Generation(kIf), 0u);

  io_.before_call = nullptr;
  auto settled = collector.Sample(kIf);
  ASSERT_TRUE(settled.ok());
  ExpectPaired(*settled, io_);
}

TEST_P(EthtoolCollectorTest, SteadyDeviceWhoseSetKeepsChangingIsReadAgainNextTime) {
  EthtoolCollector collector(io_);
  ASSERT_TRUE(collector.Sample(kIf).ok());
  io_.before_call = [&](size_t, Op) { io_.pfc_en ^= 1u << 2; };
  ASSERT_FALSE(collector.Sample(kIf).ok());
  io_.before_call = nullptr;
  io_.calls.clear();
  auto settled = collector.Sample(kIf);
  ASSERT_TRUE(settled.ok());
  ExpectPaired(*settled, io_);
  EXPECT_EQ(io_.calls, kFullRead) << "the cached names were not trusted again";
}

TEST_P(EthtoolCollectorTest, OutgrownBufferIsASetChange) {
  EthtoolCollector collector(io_);
  ASSERT_TRUE(collector.Sample(kIf).ok());
  io_.global_pause = true;
  io_.overflow_next_gstats = 1;
  io_.calls.clear();
  auto sample = collector.Sample(kIf);
  ASSERT_TRUE(sample.ok()) << sample.error().message;
  ExpectPaired(*sample, io_);
  EXPECT_EQ(io_.calls, Concat({{Op::kValues}, kFullRead}));
}

TEST_P(EthtoolCollectorTest, DeviceWithoutStatsIsNotSupported) {
  io_.has_stats = false;
  EthtoolCollector collector(io_);
  auto sample = collector.Sample(kIf);
  ASSERT_FALSE(sample.ok());
  EXPECT_TRUE(sample.error().NotSupported());
  EXPECT_EQ(collector.Generation(kIf), 0u);
}

// ---- The real kernel ---------------------------------------------------------------------------

using ::roceqos::testing::EthtoolBlock;
using ::roceqos::testing::Names;
using ::roceqos::testing::ParseEthtoolStats;
using ::roceqos::testing::Values;

TEST(KernelEthtoolIo, RejectsNamesTheKernelWouldTruncate) {
  auto io = MakeKernelEthtoolIo();
  for (const std::string& name :
       {std::string("a_name_of_16chrs"), std::string(""), std::string("lo\0x", 4)}) {
    auto count = io->StatsCount(name);
    ASSERT_FALSE(count.ok()) << name;
    EXPECT_EQ(count.error().errnum, EINVAL);
    EXPECT_THAT(count.error().message, HasSubstr("ETHTOOL_GSSET_INFO"));
  }
}

TEST(KernelEthtoolIo, UnknownDeviceIsEnodev) {
  auto io = MakeKernelEthtoolIo();
  EthtoolCollector collector(*io);
  auto sample = collector.Sample("rqe-absent0");
  ASSERT_FALSE(sample.ok());
  EXPECT_EQ(sample.error().errnum, ENODEV);
  EXPECT_THAT(sample.error().message, HasSubstr("ETHTOOL_GSSET_INFO rqe-absent0"));
  auto info = io->GetDriverInfo("rqe-absent0");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().errnum, ENODEV);
}

// `ethtool -S lo` says "no stats available": GSSET_INFO clears the ETH_SS_STATS bit.
TEST(KernelEthtoolIo, LoopbackHasNoStatsSet) {
  auto io = MakeKernelEthtoolIo();
  EthtoolCollector collector(*io);
  auto sample = collector.Sample("lo");
  ASSERT_FALSE(sample.ok());
  EXPECT_TRUE(sample.error().NotSupported()) << sample.error().message;
}

std::string Output(const std::string& command) {
  std::string text;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return text;
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof(buffer), pipe)) > 0) text.append(buffer, got);
  pclose(pipe);
  return text;
}

bool Shell(const std::string& command) { return std::system(command.c_str()) == 0; }

EthtoolBlock EthtoolS(const std::string& ifname) {
  const auto blocks = ParseEthtoolStats(Output("ethtool -S " + ifname));
  return blocks.size() == 1 ? blocks[0] : EthtoolBlock{};
}

// Broadcast frames of the IEEE local-experimental ethertype: nothing in the namespace answers
// them, so after the last one the counters stay still.
void SendFrames(const std::string& ifname, int count) {
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
  address.sll_halen = 6;
  std::memset(address.sll_addr, 0xff, 6);
  unsigned char frame[60] = {};
  std::memset(frame, 0xff, 6);                                           // destination
  const unsigned char source[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};  // locally administered
  std::memcpy(frame + 6, source, 6);
  const uint16_t ethertype = htons(0x88b5);
  std::memcpy(frame + 12, &ethertype, 2);
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(
        sendto(fd, frame, sizeof(frame), 0, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
        static_cast<ssize_t>(sizeof(frame)))
        << std::strerror(errno);
  }
  close(fd);
}

// Polls (with a deadline) until `ethtool -S` reads the same before and after our Sample, i.e.
// nothing moved in between, then requires identical names and values.
void ExpectSampleEqualsEthtoolS(EthtoolCollector& collector, const std::string& ifname) {
  SCOPED_TRACE(ifname);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    const EthtoolBlock before = EthtoolS(ifname);
    auto sample = collector.Sample(ifname);
    const EthtoolBlock after = EthtoolS(ifname);
    ASSERT_TRUE(sample.ok()) << sample.error().message;
    ASSERT_FALSE(before.empty()) << "ethtool -S " << ifname << " printed no statistics";
    if (before != after) continue;
    EXPECT_EQ(*sample->names, Names(before));
    EXPECT_EQ(sample->values, Values(before));
    return;
  }
  FAIL() << "the counters of " << ifname << " kept moving for 10 s";
}

// The body of VethSampleEqualsEthtoolS, on a thread inside a private network namespace: the
// commands it starts (ip, ethtool) and the sockets it opens belong to that namespace.
void CompareVethWithEthtoolS() {
  // IPv6 off before the links come up: no DAD, router or MLD packets move counters on their own.
  // GRO on and TSO off route veth receive through NAPI, whose rx_queue_0_xdp_* counters count
  // every frame even without an XDP program.
  ASSERT_TRUE(Shell("ip link add rqa type veth peer name rqb"));
  for (const char* ifname : {"rqa", "rqb"}) {
    const std::string i = ifname;
    ASSERT_TRUE(Shell("echo 1 > /proc/sys/net/ipv6/conf/" + i + "/disable_ipv6"));
    ASSERT_TRUE(Shell("ethtool -K " + i + " gro on tso off >/dev/null"));
    ASSERT_TRUE(Shell("ip link set " + i + " up"));
  }

  auto io = MakeKernelEthtoolIo();  // its socket belongs to the private namespace
  EthtoolCollector collector(*io);
  const EthtoolBlock idle = EthtoolS("rqb");
  ASSERT_FALSE(idle.empty());
  ExpectSampleEqualsEthtoolS(collector, "rqa");
  ExpectSampleEqualsEthtoolS(collector, "rqb");

  // Until linkwatch has seen the carrier (operstate UP, under RTNL together with dev_activate()),
  // the noop qdisc silently drops what we send.
  for (const char* ifname : {"rqa", "rqb"}) {
    const auto up_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (Output(std::string("ip -o link show ") + ifname).find("state UP") == std::string::npos) {
      ASSERT_LT(std::chrono::steady_clock::now(), up_deadline) << ifname << " never came up";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  SendFrames("rqa", 5);  // received by rqb
  SendFrames("rqb", 3);  // received by rqa
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (EthtoolS("rqb") == idle && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(EthtoolS("rqb"), idle) << "the frames never reached rqb's counters";

  ExpectSampleEqualsEthtoolS(collector, "rqa");
  ExpectSampleEqualsEthtoolS(collector, "rqb");
  EXPECT_EQ(collector.Generation("rqa"), 1u) << "veth's set never changes";

  // The traffic shows in the compared values: 5 frames into rqb, 3 into rqa.
  for (const auto& [ifname, frames] : {std::pair{"rqa", 3u}, std::pair{"rqb", 5u}}) {
    auto sample = collector.Sample(ifname);
    ASSERT_TRUE(sample.ok());
    const auto& names = *sample->names;
    const auto packets = std::find(names.begin(), names.end(), "rx_queue_0_xdp_packets");
    ASSERT_NE(packets, names.end());
    EXPECT_EQ(sample->values[packets - names.begin()], frames) << ifname;
  }

  // A stale count gets either nothing (kernels with the 2025 check) or the whole current set (older
  // kernels); never a partial or misaligned answer.
  auto count = io->StatsCount("rqa");
  ASSERT_TRUE(count.ok());
  ASSERT_GT(*count, 1u);
  auto fewer_values = io->StatsValues("rqa", *count - 1);
  auto fewer_names = io->StatsNames("rqa", *count - 1);
  ASSERT_TRUE(fewer_values.ok() && fewer_names.ok());
  EXPECT_TRUE(fewer_values->empty() || fewer_values->size() == *count) << fewer_values->size();
  EXPECT_TRUE(fewer_names->empty() || fewer_names->size() == *count) << fewer_names->size();
  ::testing::Test::RecordProperty("kernel_checks_n_stats", fewer_values->empty() ? "yes" : "no");

  // None of the four ioctls needs a capability: an unprivileged child (uid/gid nobody, which drops
  // every capability) samples the same device.
  const pid_t child = fork();
  ASSERT_GE(child, 0) << std::strerror(errno);
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
        setresuid(65534, 65534, 65534) != 0) {
      _exit(2);
    }
    auto unprivileged_io = MakeKernelEthtoolIo();
    EthtoolCollector unprivileged(*unprivileged_io);
    const bool sampled = unprivileged.Sample("rqa").ok() && unprivileged.Sample("rqa").ok();
    _exit(sampled && unprivileged_io->GetDriverInfo("rqa").ok() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;

  auto info = io->GetDriverInfo("rqa");
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->driver, "veth");
  EXPECT_THAT(Output("ethtool -i rqa"), HasSubstr("driver: " + info->driver + "\n"));

  ASSERT_TRUE(Shell("ip link del rqa"));
  auto gone = collector.Sample("rqa");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().errnum, ENODEV);
  EXPECT_EQ(collector.Generation("rqa"), 0u);
}

TEST(KernelEthtoolIo, VethSampleEqualsEthtoolS) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespace, veth pair, raw frames)";
  if (!Shell("command -v ip >/dev/null && command -v ethtool >/dev/null")) {
    GTEST_SKIP() << "needs ip and ethtool";
  }
  std::string why;
  auto netns = testing::PrivateNetns::Create("ethtool", &why);
  if (netns == nullptr) GTEST_SKIP() << why;  // e.g. root without CAP_SYS_ADMIN in a container
  ASSERT_TRUE(netns->Run(CompareVethWithEthtoolS, &why)) << why;
}

}  // namespace
}  // namespace roceqos
