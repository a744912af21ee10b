#pragma once

// /metrics rendering: a snapshot becomes fresh MetricFamily values on every scrape (the
// const-metric pattern: nothing persists between scrapes, so a device that vanished leaves no
// series). Rendering is split into one function per area, each in its own metrics_<area>.cc,
// each appending its families; RenderSnapshot calls them in catalogue order. The QoS and signals
// work add RenderQos (metrics_qos.cc) and RenderDerived (metrics_derived.cc) to that list.

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "exporter/core/snapshot.h"

namespace roceqos {

using Families = std::vector<prometheus::MetricFamily>;

void RenderEthtoolCounters(const Snapshot& snapshot, Families& out);  // metrics_counters.cc
void RenderRdmaCounters(const Snapshot& snapshot, Families& out);     // metrics_rdma.cc
void RenderDeviceInfo(const Snapshot& snapshot, Families& out);       // metrics_device.cc
void RenderQos(const Snapshot& snapshot, Families& out);              // metrics_qos.cc
void RenderDerived(const Snapshot& snapshot, Families& out);          // metrics_derived.cc
/// Self-metrics; `snapshot` is null before the first sample (build info only).
void RenderSelf(const Snapshot* snapshot, Families& out);  // metrics_self.cc

/// All families for one scrape. Never throws on data; `snapshot` may be null.
Families RenderSnapshot(const Snapshot* snapshot);

/// Label value for a priority / traffic class index without allocating for 0..7.
std::string_view IndexLabel(int index, std::string& storage);

/// The /metrics collectable: renders whatever `latest` returns at scrape time.
class SnapshotCollectable : public prometheus::Collectable {
 public:
  using Latest = std::function<std::shared_ptr<const Snapshot>()>;
  explicit SnapshotCollectable(Latest latest) : latest_(std::move(latest)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  Latest latest_;
};

}  // namespace roceqos
