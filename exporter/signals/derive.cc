#include "exporter/signals/derive.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include "base/log_event.h"
#include "base/ring_buffer.h"
#include "collectors/rdma.h"
#include "exporter/signals/ecn_pairing.h"

namespace roceqos {
namespace {

namespace slot = signal_slot;

constexpr size_t kPauseSeries =
    size_t{2} * kNumPriorities;  // index: DirectionOffset(direction) + prio

// No NIC counter counts faster than this: 800 Gb/s of minimum-size frames is ~1.2e9/s. A faster
// step means a bogus read, so the interval is dropped instead of publishing an absurd rate.
constexpr double kMaxPlausibleEventsPerSecond = 1e10;

Direction Opposite(Direction direction) {
  return direction == Direction::kTx ? Direction::kRx : Direction::kTx;
}

std::bitset<slot::kCount> RdmaSlots() {
  std::bitset<slot::kCount> mask;
  mask.set(slot::kNpCnpSent);
  mask.set(slot::kNpEcnMarkedRocePackets);
  mask.set(slot::kRpCnpHandled);
  return mask;
}

bool IsDurationSlot(size_t index) {
  return index >= slot::PauseDurationMicros(Direction::kRx, 0) &&
         index < slot::PrioPackets(Direction::kRx, 0);
}

int64_t BucketIndex(SampleTime time) {
  // Floor division: monotonic timestamps are positive in practice, but tests may use any epoch.
  const int64_t bucket = std::chrono::duration_cast<SampleTime>(kWindowBucket).count();
  const int64_t t = time.count();
  return t >= 0 ? t / bucket : -((-t + bucket - 1) / bucket);
}

// Per-second aggregate of the intervals that ended in that second; windows are built from these.
struct Bucket {
  int64_t index = 0;
  std::array<float, kPauseSeries> rate_peak{};
  std::array<float, kPauseSeries> ratio_peak{};
  std::array<RoleEcnCounts, kEcnRoleCount> roles{};      // spans between RDMA reads that ended here
  std::array<bool, kEcnRoleCount> role_counter_valid{};  // an interval here had the role's counter
  SampleTime longest_paused_span{};  // the longest of those spans with pauses (ecn_pairing.h)
  uint64_t cnp_sent = 0;
  uint64_t ecn_marked = 0;
  bool cnp_known = false;

  void AddSpan(const EcnSpan& span) {
    AddRoleCounts(roles, span.roles);
    if (span.HasPauses()) longest_paused_span = std::max(longest_paused_span, span.length);
  }
};

struct WindowAccumulator {
  std::array<float, kPauseSeries> rate_peak{};
  std::array<float, kPauseSeries> ratio_peak{};
  std::array<RoleEcnCounts, kEcnRoleCount> roles{};
  std::array<bool, kEcnRoleCount> role_counter_valid{};
  SampleTime longest_paused_span{};
  uint64_t cnp_sent = 0;
  uint64_t ecn_marked = 0;
  bool cnp_known = false;

  void Add(const Bucket& bucket) {
    for (size_t i = 0; i < kPauseSeries; ++i) {
      rate_peak[i] = std::max(rate_peak[i], bucket.rate_peak[i]);
      ratio_peak[i] = std::max(ratio_peak[i], bucket.ratio_peak[i]);
    }
    AddRoleCounts(roles, bucket.roles);
    for (size_t r = 0; r < kEcnRoleCount; ++r)
      role_counter_valid[r] |= bucket.role_counter_valid[r];
    longest_paused_span = std::max(longest_paused_span, bucket.longest_paused_span);
    cnp_sent += bucket.cnp_sent;
    ecn_marked += bucket.ecn_marked;
    cnp_known |= bucket.cnp_known;
  }
};

// A window shorter than a span it holds would compare counts of a longer time than it names:
// such a window is unknown until the span leaves it.
EcnWindowSignals EcnSignals(const WindowAccumulator& acc, std::chrono::seconds window,
                            const std::array<uint64_t, kEcnRoleCount>& pending) {
  EcnWindowSignals out;
  const bool fresh_enough = acc.longest_paused_span <= window;
  for (size_t r = 0; r < kEcnRoleCount; ++r) {
    const bool quiet = acc.role_counter_valid[r] && pending[r] == 0;
    if (fresh_enough) out.roles[r] = RoleSignalsOf(acc.roles[r], quiet);
  }
  out.cnp_known = acc.cnp_known;
  out.cnp_sent = acc.cnp_sent;
  out.ecn_marked = acc.ecn_marked;
  out.cnp_to_ecn_ratio = static_cast<double>(acc.cnp_sent) /
                         static_cast<double>(std::max<uint64_t>(acc.ecn_marked, 1));
  return out;
}

// The accumulators of each window as of the bucket `now_index`. Windows are ascending, so one
// pass from the newest bucket yields each window in turn.
std::array<WindowAccumulator, kMaxWindows> AccumulateWindows(
    const RingBuffer<Bucket>& buckets, int64_t now_index,
    std::span<const std::chrono::seconds> lengths) {
  std::array<WindowAccumulator, kMaxWindows> windows{};
  WindowAccumulator running;
  size_t next_window = 0;
  buckets.VisitNewestFirst([&](const Bucket& bucket) {
    const int64_t age = now_index - bucket.index;
    while (next_window < lengths.size() && age > lengths[next_window] / kWindowBucket) {
      windows[next_window++] = running;
    }
    if (next_window == lengths.size()) return false;
    running.Add(bucket);
    return true;
  });
  while (next_window < lengths.size()) windows[next_window++] = running;
  return windows;
}

}  // namespace

namespace {

// The counter steps of one interval between two samples of a device.
struct Interval {
  SampleTime from{};
  SampleTime to{};
  double seconds = 0;
  std::bitset<slot::kCount> valid;  // present in both samples (RDMA only for the same port)
  std::bitset<slot::kCount> seen;   // present in either sample
  std::array<uint64_t, slot::kCount> delta{};
  bool rdma_read_at_end = true;  // the sample at `to` holds a new read of the RDMA counters

  bool Positive(size_t i) const { return valid.test(i) && delta[i] > 0; }
};

// Fills `interval` from two samples of a device; returns why the interval cannot be used, if so.
std::optional<DiscardReason> Difference(const DeviceSample& previous, const DeviceSample& sample,
                                        Interval& interval) {
  static const std::bitset<slot::kCount> kRdmaSlots = RdmaSlots();
  interval.from = previous.time;
  interval.to = sample.time;
  interval.valid = previous.present & sample.present;
  interval.seen = previous.present | sample.present;
  if (!sample.identity.SameRdma(previous.identity)) interval.valid &= ~kRdmaSlots;
  // A read time of 0 is unknown: every sample is then taken for a new read.
  interval.rdma_read_at_end =
      sample.rdma_read_at.count() == 0 || sample.rdma_read_at != previous.rdma_read_at;
  interval.seconds = std::chrono::duration<double>(sample.time - previous.time).count();
  if (sample.time <= previous.time) return DiscardReason::kClock;
  if (!sample.identity.SamePort(previous.identity)) return DiscardReason::kIdentityChange;
  for (size_t i = 0; i < slot::kCount; ++i) {
    if (!interval.valid.test(i)) continue;
    const CounterStep step =
        StepCounter(previous.values[i], sample.values[i], SignalSlotWidthBits(i));
    if (step.kind == CounterStep::Kind::kReset) return DiscardReason::kCounterReset;
    if (!IsDurationSlot(i) &&
        static_cast<double>(step.delta) / interval.seconds > kMaxPlausibleEventsPerSecond) {
      return DiscardReason::kImplausible;
    }
    interval.delta[i] = step.delta;
  }
  return std::nullopt;
}

// NIC stall detector (tx_pause_storm_*_events): port-wide, so it is attributed to the priorities
// that transmitted pause in this interval, or to every lossless one if none did. 0: no event.
uint8_t StallPrios(const Interval& interval, uint8_t lossless) {
  if (!interval.Positive(slot::kStormWarningEvents) &&
      !interval.Positive(slot::kStormErrorEvents)) {
    return 0;
  }
  uint8_t prios = 0;
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    if (interval.Positive(slot::PauseFrames(Direction::kTx, prio)) ||
        interval.Positive(slot::PauseDurationMicros(Direction::kTx, prio))) {
      prios = static_cast<uint8_t>(prios | (1u << prio));
    }
  }
  return prios == 0 ? lossless : prios;
}

// What one interval says about the pause of one (direction, prio) series.
struct PauseObservation {
  StormInterval storm;
};

// Records the pause rate and ratio peaks of one series in `bucket` and judges the interval for
// its storm detector.
PauseObservation ObservePause(const Interval& interval, Direction direction, int prio,
                              const StormConfig& config, Bucket& bucket) {
  const size_t series = slot::DirectionOffset(direction) + static_cast<size_t>(prio);
  const size_t frames = slot::PauseFrames(direction, prio);
  const size_t duration = slot::PauseDurationMicros(direction, prio);
  if (interval.valid.test(frames)) {
    const auto rate =
        static_cast<float>(static_cast<double>(interval.delta[frames]) / interval.seconds);
    bucket.rate_peak[series] = std::max(bucket.rate_peak[series], rate);
  }
  PauseObservation out{{interval.from, interval.to, StormVerdict::kUnknown, false}};
  if (!interval.valid.test(duration)) return out;
  // Firmware updates the duration counter on its own schedule, so one interval can show a
  // little more pause than wall time: clamp to [0, 1].
  const double micros = interval.seconds * 1e6;
  const double paused = static_cast<double>(interval.delta[duration]);
  const double ratio = std::clamp(paused / micros, 0.0, 1.0);
  bucket.ratio_peak[series] = std::max(bucket.ratio_peak[series], static_cast<float>(ratio));
  // Paused in `direction` means the traffic flowing the other way is held: rx pauses stop
  // our transmit, tx pauses stop what the peer sends us.
  const size_t progress = slot::PrioPackets(Opposite(direction), prio);
  const bool no_progress = !interval.Positive(progress);
  out.storm.verdict =
      ratio >= config.threshold && no_progress ? StormVerdict::kCondition : StormVerdict::kClear;
  // Half the detection time of pause that may all lie at the interval's end: a storm that began
  // inside it (docs/signals.md, "Onset credit"). Less is caught by the next interval, which the
  // storm then fills: sparse reads of an idle port stay within a period + a short follow-up.
  const auto tail = std::chrono::duration<double, std::micro>(paused);
  if (out.storm.verdict == StormVerdict::kClear && tail >= config.detection_time / 2) {
    out.storm.verdict = StormVerdict::kTailCondition;
    out.storm.tail =
        std::min(std::chrono::duration_cast<SampleTime>(tail), interval.to - interval.from);
  }
  return out;
}

// Whether the NIC's stall detector stayed silent. A stall counter seen in only one of the two
// samples cannot prove that.
bool StallCountersQuiet(const Interval& interval) {
  for (size_t index : {slot::kStormWarningEvents, slot::kStormErrorEvents}) {
    if (interval.seen.test(index) && (!interval.valid.test(index) || interval.delta[index] > 0)) {
      return false;
    }
  }
  return true;
}

// Whether an interval shows one (direction, prio) series free of storm signs, for the storm
// guard (docs/signals.md, "Storm guard"). With a duration counter the storm verdict decides;
// without one no pause frame may have moved, since pause that cannot be measured could be a
// storm. A lossless series without counters, or one whose counters are in only one of the two
// samples, cannot be seen, so it is not quiet.
bool SeriesQuiet(const Interval& interval, Direction direction, int prio, StormVerdict verdict,
                 bool lossless) {
  const size_t frames = slot::PauseFrames(direction, prio);
  const size_t duration = slot::PauseDurationMicros(direction, prio);
  // A tail is short of the condition, as it was before onset credit; the follow-up read it asks
  // for holds the evidence at unknown until it decides (Evidence()).
  if (interval.valid.test(duration)) {
    return verdict == StormVerdict::kClear || verdict == StormVerdict::kTailCondition;
  }
  if (interval.seen.test(duration)) return false;
  if (interval.valid.test(frames)) return interval.delta[frames] == 0;
  return !lossless && !interval.seen.test(frames);
}

void LogTransition(StormDetector::Transition transition, const StormDetector& detector,
                   const std::string& netdev, Direction direction, int prio, bool stall_event) {
  switch (transition) {
    case StormDetector::Transition::kStarted:
      LogEvent(spdlog::level::warn, "PFC storm",
               {{"netdev", netdev},
                {"prio", prio},
                {"direction", DirectionName(direction)},
                {"source", stall_event ? "nic_stall_detector" : "pause_ratio"}});
      break;
    case StormDetector::Transition::kRestored:
      LogEvent(spdlog::level::info, "PFC storm restored",
               {{"netdev", netdev},
                {"prio", prio},
                {"direction", DirectionName(direction)},
                {"duration_seconds",
                 fmt::format(
                     "{:.3f}",
                     std::chrono::duration<double>(*detector.last_episode_duration()).count())}});
      break;
    case StormDetector::Transition::kNone:
      break;
  }
}

// What the interval gives the pairing of pauses with the RDMA congestion counters.
EcnIntervalInput EcnInputOf(const Interval& interval, uint64_t rx_lossless, uint64_t tx_lossless) {
  EcnIntervalInput in{.from = interval.from,
                      .to = interval.to,
                      .rx_lossless_pauses = rx_lossless,
                      .tx_lossless_pauses = tx_lossless,
                      .rdma_read_at_end = interval.rdma_read_at_end,
                      .rp_cnp_handled = std::nullopt,
                      .np_ecn_marked = std::nullopt};
  if (interval.valid.test(slot::kRpCnpHandled))
    in.rp_cnp_handled = interval.delta[slot::kRpCnpHandled];
  if (interval.valid.test(slot::kNpEcnMarkedRocePackets)) {
    in.np_ecn_marked = interval.delta[slot::kNpEcnMarkedRocePackets];
  }
  return in;
}

// The CNP-to-ECN counts of the interval, where the RDMA counters they need are valid.
void AddCnpCounts(const Interval& interval, Bucket& bucket) {
  const auto& valid = interval.valid;
  const auto& delta = interval.delta;
  if (valid.test(slot::kNpCnpSent) && valid.test(slot::kNpEcnMarkedRocePackets)) {
    bucket.cnp_known = true;
    bucket.cnp_sent += delta[slot::kNpCnpSent];
    bucket.ecn_marked += delta[slot::kNpEcnMarkedRocePackets];
  }
}

// The storm role of each priority with storm series (docs/signals.md, "Storm role"). The tx
// detector's condition is the origin's: it pauses the peer while nothing is received on the
// priority, and the NIC's own stall events (tx_pause_storm_*) feed that detector. The rx
// detector's is the victim's: it is paused while nothing it sends moves.
std::vector<PrioStormRole> StormRolesOf(const std::vector<StormSignals>& storms) {
  std::vector<PrioStormRole> roles;
  for (const StormSignals& storm : storms) {
    if (roles.empty() || roles.back().prio != storm.prio) roles.push_back({storm.prio, {}});
    PrioStormRole& role = roles.back();
    if (!storm.stormed) continue;
    if (storm.direction == Direction::kTx) {
      role.role = StormRole::kOrigin;
    } else if (role.role == StormRole::kNone) {
      role.role = StormRole::kVictim;
    }
  }
  return roles;
}

}  // namespace

struct SignalDeriver::DeviceState {
  explicit DeviceState(size_t bucket_capacity) : buckets(bucket_capacity) {}

  std::optional<DeviceSample> last;
  RingBuffer<Bucket> buckets;
  std::array<StormDetector, kPauseSeries> storms;
  std::array<uint64_t, kDiscardReasonCount> discarded{};
  std::optional<SampleTime> sample_due;  // NextSampleDue() of this device
  // Start of the current run of consecutive usable intervals without storm signs (SeriesQuiet
  // for every series, no stall event): the history behind StormEvidence::kClear.
  std::optional<SampleTime> quiet_since;
  EcnPairing ecn_pairing;

  void RequestSampleBy(SampleTime time) {
    if (!sample_due || time < *sample_due) sample_due = time;
  }

  void Discard(DiscardReason reason, const Interval& interval, const StormConfig& config) {
    ++discarded[static_cast<size_t>(reason)];
    quiet_since.reset();
    ecn_pairing.Reset();
    // The detectors must not bridge a gap they cannot see: an unknown interval breaks both the
    // detection and the restoration run.
    if (interval.to > interval.from) {
      for (auto& detector : storms) {
        (void)detector.Observe({interval.from, interval.to, StormVerdict::kUnknown, false}, config);
      }
    }
  }

  // The bucket of the second the interval ended in.
  Bucket& BucketAt(SampleTime time) {
    const int64_t index = BucketIndex(time);
    if (buckets.empty() || buckets.Newest().index != index) buckets.Push(Bucket{.index = index});
    return buckets.Newest();
  }

  // Feeds one series' storm detector and asks for an early sample when a storm can be decided.
  void FeedDetector(const std::string& netdev, Direction direction, int prio,
                    const PauseObservation& pause, const StormConfig& config) {
    StormDetector& detector = storms[slot::DirectionOffset(direction) + static_cast<size_t>(prio)];
    const StormDetector::Transition transition = detector.Observe(pause.storm, config);
    if (auto due = detector.detection_due(config)) {
      // A tail credit is confirmed by the next interval, which must be long enough to judge the
      // paused ratio: half the detection time (a follow-up read of this port alone).
      if (detector.tail_candidate())
        *due = std::max(*due, pause.storm.end + config.detection_time / 2);
      RequestSampleBy(*due);
    }
    LogTransition(transition, detector, netdev, direction, prio, pause.storm.ground_truth_event);
  }

  // Peaks, storm detection and ECN counts of a usable interval.
  void Accumulate(const std::string& netdev, const Interval& interval, uint8_t lossless,
                  const StormConfig& config, SampleTime max_gap) {
    Bucket& bucket = BucketAt(interval.to);
    const uint8_t stall_prios = StallPrios(interval, lossless);
    bool quiet = StallCountersQuiet(interval);
    std::array<uint64_t, 2> lossless_pauses{};  // by Direction::kRx, kTx
    for (Direction direction : slot::kDirections) {
      for (int prio = 0; prio < kNumPriorities; ++prio) {
        const size_t frames = slot::PauseFrames(direction, prio);
        if (interval.valid.test(frames) && (lossless & (1u << prio))) {
          lossless_pauses[direction == Direction::kTx ? 1 : 0] += interval.delta[frames];
        }
        PauseObservation pause = ObservePause(interval, direction, prio, config, bucket);
        pause.storm.ground_truth_event =
            direction == Direction::kTx && (stall_prios & (1u << prio));
        FeedDetector(netdev, direction, prio, pause, config);
        quiet = quiet && SeriesQuiet(interval, direction, prio, pause.storm.verdict,
                                     (lossless & (1u << prio)) != 0);
      }
    }
    const EcnIntervalInput ecn = EcnInputOf(interval, lossless_pauses[0], lossless_pauses[1]);
    bucket.role_counter_valid[static_cast<size_t>(EcnRole::kReactionPoint)] |=
        ecn.rp_cnp_handled.has_value();
    bucket.role_counter_valid[static_cast<size_t>(EcnRole::kNotificationPoint)] |=
        ecn.np_ecn_marked.has_value();
    if (auto span = ecn_pairing.Add(ecn)) bucket.AddSpan(*span);
    AddCnpCounts(interval, bucket);
    // A longer interval is a gap in the quiet span: it is seen only as one average, which is not
    // the resolution the state machine is built for. The span starts again after it.
    if (!quiet || interval.to - interval.from > max_gap) {
      quiet_since.reset();
    } else if (!quiet_since) {
      quiet_since = interval.from;
    }
  }

  // Storm guard verdict as of the newest sample (docs/signals.md, "Storm guard").
  StormEvidence Evidence(const StormConfig& config) const {
    for (const StormDetector& detector : storms) {
      // A tail candidate is not yet evidence of a storm; its follow-up read decides (sample_due).
      if (detector.stormed() || (detector.detection_due(config) && !detector.tail_candidate())) {
        return StormEvidence::kStorm;
      }
    }
    // The deriver waits for a sample that decides whether the newest interval's pause was the
    // start of a storm: until it comes, that interval cannot vouch for anything.
    if (sample_due) return StormEvidence::kUnknown;
    // Quiet for the detection time: a storm older than the history would have been declared.
    // Quiet for the restoration time: one that was declared before the history would be over.
    const SampleTime span = std::max(config.detection_time, config.restoration_time);
    if (!last || !quiet_since || last->time - *quiet_since < span) return StormEvidence::kUnknown;
    return StormEvidence::kClear;
  }

  // For an `unknown` evidence, when the read that can move it towards `clear` is best taken: the
  // follow-up the deriver waits for, else the end of the quiet span (starting with the next
  // interval when there is none), but no later than the gap bound allows.
  std::optional<SampleTime> NextEvidenceRead(StormEvidence evidence, const StormConfig& config,
                                             SampleTime max_gap) const {
    if (evidence != StormEvidence::kUnknown || !last) return std::nullopt;
    if (sample_due) return sample_due;
    const SampleTime span = std::max(config.detection_time, config.restoration_time);
    const SampleTime span_end = quiet_since.value_or(last->time) + span;
    return std::max(last->time, std::min(span_end, last->time + max_gap));
  }
};

SignalDeriver::SignalDeriver(DeriveConfig config) : config_(std::move(config)) {
  if (config_.windows.empty()) config_.windows.emplace_back(60);
  if (config_.windows.size() > kMaxWindows) config_.windows.resize(kMaxWindows);
}

SignalDeriver::~SignalDeriver() = default;

void SignalDeriver::Forget(std::string_view netdev) {
  auto it = devices_.find(netdev);
  if (it != devices_.end()) devices_.erase(it);
}

void SignalDeriver::RetainOnly(std::span<const std::string> present) {
  for (auto it = devices_.begin(); it != devices_.end();) {
    if (std::find(present.begin(), present.end(), it->first) == present.end()) {
      it = devices_.erase(it);
    } else {
      ++it;
    }
  }
}

void SignalDeriver::Observe(const std::string& netdev, const DeviceSample& sample) {
  auto it = devices_.find(netdev);
  if (it == devices_.end()) {
    // Buckets cover ages 0..window/bucket: the longest window plus the current partial second.
    const size_t capacity = static_cast<size_t>(config_.windows.back() / kWindowBucket) + 1;
    it = devices_.emplace(netdev, std::make_unique<DeviceState>(capacity)).first;
  }
  DeviceState& state = *it->second;
  state.sample_due.reset();
  if (state.last) {
    Interval interval;
    if (auto discard = Difference(*state.last, sample, interval)) {
      state.Discard(*discard, interval, config_.storm);
      LogEvent(spdlog::level::debug, "derive: interval discarded",
               {{"netdev", netdev}, {"reason", DiscardReasonName(*discard)}});
    } else {
      state.Accumulate(netdev, interval, sample.LosslessPrios(), config_.storm,
                       config_.max_read_gap);
    }
  }
  state.last = sample;
}

std::optional<SampleTime> SignalDeriver::NextSampleDue(SampleTime now) const {
  std::optional<SampleTime> earliest;
  for (const auto& [netdev, state] : devices_) {
    const std::optional<SampleTime>& due = state->sample_due;
    if (due && *due > now && (!earliest || *due < *earliest)) {
      earliest = state->sample_due;
    }
  }
  return earliest;
}

std::vector<std::pair<std::string, SampleTime>> SignalDeriver::SamplesDue(SampleTime now) const {
  std::vector<std::pair<std::string, SampleTime>> out;
  for (const auto& [netdev, state] : devices_) {
    if (state->sample_due && *state->sample_due > now) out.emplace_back(netdev, *state->sample_due);
  }
  return out;
}

DerivedSignals SignalDeriver::Signals() const {
  DerivedSignals out;
  out.windows = config_.windows;
  out.devices.reserve(devices_.size());
  for (const auto& [netdev, state] : devices_) out.devices.push_back(BuildSignals(netdev, *state));
  return out;
}

std::optional<DeviceSignals> SignalDeriver::SignalsOf(std::string_view netdev) const {
  auto it = devices_.find(netdev);
  if (it == devices_.end()) return std::nullopt;
  return BuildSignals(it->first, *it->second);
}

DeviceSignals SignalDeriver::BuildSignals(const std::string& netdev,
                                          const DeviceState& state) const {
  const size_t window_count = config_.windows.size();
  const DeviceSample& latest = *state.last;
  DeviceSignals device;
  device.netdev = netdev;
  device.rdma_device = latest.rdma_device;
  device.rdma_port = latest.rdma_port;
  device.discarded_intervals = state.discarded;
  device.storm_evidence = state.Evidence(config_.storm);
  device.storm_evidence_read_at = latest.time;
  device.storm_evidence_next_read =
      state.NextEvidenceRead(device.storm_evidence, config_.storm, config_.max_read_gap);

  const std::array<WindowAccumulator, kMaxWindows> windows =
      AccumulateWindows(state.buckets, BucketIndex(latest.time), config_.windows);

  const uint8_t lossless = latest.LosslessPrios();
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    for (Direction direction : slot::kDirections) {
      const size_t series = signal_slot::DirectionOffset(direction) + static_cast<size_t>(prio);
      const bool counters = latest.present.test(slot::PauseFrames(direction, prio)) ||
                            latest.present.test(slot::PauseDurationMicros(direction, prio));
      if (counters) {
        PauseSignals& pause = device.pause.emplace_back();
        pause.prio = static_cast<uint8_t>(prio);
        pause.direction = direction;
        for (size_t w = 0; w < window_count; ++w) {
          pause.rate_peak[w] = windows[w].rate_peak[series];
          pause.paused_ratio_peak[w] = windows[w].ratio_peak[series];
        }
      }
      const StormDetector& detector = state.storms[series];
      if (counters || (lossless & (1u << prio)) || detector.stormed() || detector.episodes() > 0) {
        StormSignals& storm = device.storms.emplace_back();
        storm.prio = static_cast<uint8_t>(prio);
        storm.direction = direction;
        storm.stormed = detector.stormed();
        storm.episodes = detector.episodes();
        if (auto duration = detector.last_episode_duration()) {
          storm.last_episode_seconds = std::chrono::duration<double>(*duration).count();
        }
      }
    }
  }
  device.storm_roles = StormRolesOf(device.storms);
  for (size_t w = 0; w < window_count; ++w) {
    device.ecn[w] = EcnSignals(windows[w], config_.windows[w], state.ecn_pairing.PendingPauses());
  }
  return device;
}

}  // namespace roceqos
