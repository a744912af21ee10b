#include "exporter/sampling/port_scheduler.h"

#include <algorithm>

namespace roceqos {
namespace {

using Duration = PortScheduler::Duration;

Duration FromNs(double ns) { return Duration(static_cast<Duration::rep>(ns)); }

}  // namespace

void PortScheduler::Retain(std::span<const std::string> ports) {
  std::erase_if(ports_, [&](const auto& entry) {
    return std::find(ports.begin(), ports.end(), entry.first) == ports.end();
  });
  for (const std::string& port : ports) ports_.try_emplace(port);
}

double PortScheduler::WakeCost(Class c) const {
  double cost = 0;
  for (const auto& [name, port] : ports_) {
    if (port.read && port.active == (c == kActive)) cost += port.cost.Nanoseconds();
  }
  return cost;
}

Duration PortScheduler::IdlePeriod() const {
  const double share = options_.duty_cycle / 2 * kMargin;
  const Duration period =
      std::max({options_.idle_period, options_.fast_period, FromNs(WakeCost(kIdle) / share)});
  return std::min(period, options_.max_period);
}

Duration PortScheduler::ActivePeriod() const {
  const double idle_cost = WakeCost(kIdle);
  const double idle_share =
      idle_cost == 0 ? 0 : idle_cost / static_cast<double>(IdlePeriod().count());
  double rdma_share = 0;
  for (const auto& [name, port] : ports_) {
    const Duration every = port.active ? kRdmaActivePeriod : kRdmaRefresh;
    rdma_share += port.rdma_cost.Nanoseconds() / static_cast<double>(every.count());
  }
  const double available =
      std::max(options_.duty_cycle * kMargin - idle_share - rdma_share, options_.duty_cycle / 4);
  const Duration period = std::max(options_.fast_period, FromNs(WakeCost(kActive) / available));
  return std::min(period, options_.max_period);
}

bool PortScheduler::EthtoolDue(const std::string& port, Duration now) const {
  auto it = ports_.find(port);
  if (!enabled() || read_all_ || it == ports_.end() || !it->second.read) return true;
  const Port& p = it->second;
  if (p.urgent && now >= *p.urgent) return true;
  return now >= due_[p.active ? kActive : kIdle];
}

bool PortScheduler::RdmaDue(const std::string& port, Duration now, bool ethtool_moved) const {
  auto it = ports_.find(port);
  if (!enabled() || it == ports_.end() || !it->second.rdma_read) return true;
  const Port& p = it->second;
  const Duration since = now - p.last_rdma;
  if (since >= kRdmaRefresh) return true;
  const bool moving = ethtool_moved || p.rdma_moved;
  // Stopped moving at this read: one read brings the RDMA counters to their resting values.
  if (p.active && !moving) return true;
  return moving && since >= kRdmaActivePeriod;
}

bool PortScheduler::AnyDue(Duration now) const {
  if (!enabled() || read_all_) return true;
  // Without ports a wake every idle period still publishes: the snapshot's age is the liveness
  // signal (/-/healthy, systemd's watchdog), and discovery runs with the samples.
  if (ports_.empty()) return now >= due_[kIdle];
  return std::any_of(ports_.begin(), ports_.end(),
                     [&](const auto& entry) { return EthtoolDue(entry.first, now); });
}

std::optional<Duration> PortScheduler::NextDue() const {
  if (ports_.empty()) return due_[kIdle];
  std::optional<Duration> earliest;
  for (const auto& [name, port] : ports_) {
    Duration due = port.read ? due_[port.active ? kActive : kIdle] : Duration{};
    if (port.urgent) due = std::min(due, *port.urgent);
    if (!earliest || due < *earliest) earliest = due;
  }
  return earliest;
}

void PortScheduler::RecordEthtool(const std::string& port, Duration now, Duration cost,
                                  bool moved) {
  Port& p = ports_[port];
  p.read = true;
  p.active = moved || p.rdma_moved;
  if (p.urgent && *p.urgent <= now) p.urgent.reset();
  p.cost.Add(cost);
}

void PortScheduler::RecordRdma(const std::string& port, Duration now, Duration cost, bool moved) {
  Port& p = ports_[port];
  p.rdma_read = true;
  p.rdma_moved = moved;
  p.last_rdma = now;
  if (cost.count() > 0) p.rdma_cost.Add(cost);
}

void PortScheduler::Urgent(const std::string& port, Duration at) {
  auto it = ports_.find(port);
  if (it == ports_.end()) return;
  if (!it->second.urgent || at < *it->second.urgent) it->second.urgent = at;
}

void PortScheduler::EndWake(Duration now) {
  read_all_ = false;
  // A follow-up that was due has been tried: a failed read must not make every wake due again.
  for (auto& [name, port] : ports_) {
    if (port.urgent && *port.urgent <= now) port.urgent.reset();
  }
  // The periods are taken after the reads: they count the ports in their new classes. A class
  // that was not due keeps its time, so a port that just joined it is read with the others.
  const std::array<Duration, 2> periods{IdlePeriod(), ActivePeriod()};
  for (size_t c = 0; c < due_.size(); ++c) {
    if (due_[c] <= now) due_[c] = now + periods[c];
  }
}

void ReadCost::Add(Duration cost) {
  values_[next_] = static_cast<double>(cost.count());
  next_ = (next_ + 1) % kSize;
  count_ = std::min(count_ + 1, kSize);
}

double ReadCost::Nanoseconds() const {
  if (count_ == 0) return 0;
  std::array<double, kSize> sorted = values_;
  auto mid = sorted.begin() + static_cast<std::ptrdiff_t>(count_ / 2);
  std::nth_element(sorted.begin(), mid, sorted.begin() + static_cast<std::ptrdiff_t>(count_));
  return *mid;
}

void DutyCycle::Record(Duration start, Duration kernel) {
  if (!first_) first_ = start;
  records_.emplace_back(start, kernel);
  while (!records_.empty() && records_.front().first < start - window_) records_.pop_front();
}

double DutyCycle::Ratio(Duration now) const {
  if (!first_) return 0;
  const Duration from = std::max(*first_, now - window_);
  const Duration span = now - from;
  if (span.count() <= 0) return 0;
  Duration kernel{};
  for (const auto& [start, spent] : records_) {
    if (start >= from) kernel += spent;
  }
  return std::min(1.0, static_cast<double>(kernel.count()) / static_cast<double>(span.count()));
}

}  // namespace roceqos
