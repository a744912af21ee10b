#include "exporter/sampling/port_scheduler.h"

#include <algorithm>

namespace roceqos {
namespace {

using Duration = PortScheduler::Duration;

// The newest read weighs a quarter: one slow read (a loaded host) does not halve the rate.
double Average(double old, Duration cost) {
  const double value = static_cast<double>(cost.count());
  return old == 0 ? value : old * 0.75 + value * 0.25;
}

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
    if (port.read && port.active == (c == kActive)) cost += port.cost_ns;
  }
  return cost;
}

Duration PortScheduler::IdlePeriod() const {
  const double share = options_.duty_cycle / 2 * kMargin;
  return std::max({options_.idle_period, options_.fast_period, FromNs(WakeCost(kIdle) / share)});
}

Duration PortScheduler::ActivePeriod() const {
  const double idle_cost = WakeCost(kIdle);
  const double idle_share =
      idle_cost == 0 ? 0 : idle_cost / static_cast<double>(IdlePeriod().count());
  double rdma_cost = 0;
  for (const auto& entry : ports_) rdma_cost += entry.second.rdma_cost_ns;
  const double rdma_share = rdma_cost / static_cast<double>(kRdmaActivePeriod.count());
  const double available =
      std::max(options_.duty_cycle * kMargin - idle_share - rdma_share, options_.duty_cycle / 4);
  return std::max(options_.fast_period, FromNs(WakeCost(kActive) / available));
}

bool PortScheduler::EthtoolDue(const std::string& port, Duration now) const {
  auto it = ports_.find(port);
  if (!enabled() || read_all_ || it == ports_.end() || !it->second.read) return true;
  const Port& p = it->second;
  if (p.urgent && now >= *p.urgent) return true;
  return now >= due_[p.active ? kActive : kIdle];
}

bool PortScheduler::RdmaDue(const std::string& port, Duration now) const {
  auto it = ports_.find(port);
  if (!enabled() || it == ports_.end() || !it->second.rdma_read) return true;
  const Port& p = it->second;
  const Duration since = now - p.last_rdma;
  if (since >= kRdmaRefresh) return true;
  // Stopped moving: one read brings the RDMA counters to their resting values.
  if (p.moved_since_rdma && p.stopped) return true;
  return p.moved_since_rdma && since >= kRdmaActivePeriod;
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
  p.stopped = p.read && p.active && !moved;
  p.read = true;
  p.active = moved;
  if (p.urgent && *p.urgent <= now) p.urgent.reset();
  p.moved_since_rdma = p.moved_since_rdma || moved;
  p.cost_ns = Average(p.cost_ns, cost);
}

void PortScheduler::RecordRdma(const std::string& port, Duration now, Duration cost) {
  Port& p = ports_[port];
  p.rdma_read = true;
  p.moved_since_rdma = false;
  p.last_rdma = now;
  if (cost.count() > 0) p.rdma_cost_ns = Average(p.rdma_cost_ns, cost);
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
