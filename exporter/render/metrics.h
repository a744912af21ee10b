#pragma once

// /metrics rendering: a snapshot becomes fresh families on every render (the const-metric
// pattern: nothing persists between renders, so a device that vanished leaves no series).
// Rendering is split into one function per area, each in its own metrics_<area>.cc, each
// appending its families to a MetricSink; RenderSnapshot calls them in catalogue order. The sink
// takes prometheus-cpp MetricFamily values (tests) or writes the text format directly (/metrics,
// exposition_cache.h), the same bytes TextSerializer would write.

#include <prometheus/metric_family.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exporter/core/snapshot.h"
#include "exporter/render/metric_groups.h"

namespace roceqos {

using Families = std::vector<prometheus::MetricFamily>;

/// Where a /metrics scrape's body came from (roce_exporter_scrapes_total{body}): rendered ahead by
/// the render worker and ready on arrival; ready on arrival because an earlier scrape of the same
/// snapshot rendered it; finished while the scrape waited for a render under way; or rendered (or
/// compressed) by the scrape itself on its path.
enum class ScrapeBody : uint8_t { kPrerendered, kCached, kWaited, kRendered };
inline constexpr size_t kScrapeBodies = 4;
inline constexpr std::array<std::string_view, kScrapeBodies> kScrapeBodyNames = {
    "prerendered", "cached", "waited", "rendered"};

/// The HTTP server's own counters (promhttp-style) and the exposition cache's render cost, as of
/// the moment a body is rendered (a cached body shows them as of its render).
struct ServingStats {
  std::vector<std::pair<std::string, uint64_t>> requests_by_code;  // every code of the closed set
  int64_t in_flight = 0;
  uint64_t rejected = 0;
  uint64_t bytes_identity = 0;
  uint64_t bytes_gzip = 0;
  double render_seconds = 0;  // of the previous render (a body cannot time itself)
  uint64_t renders = 0;
  std::array<uint64_t, kScrapeBodies> scrapes{};  // by ScrapeBody
};

/// Where the renderers put their families, limited to `groups`: prometheus-cpp values, or the
/// text format 0.0.4 appended to a string.
class MetricSink {
 public:
  explicit MetricSink(Families& families, MetricGroups groups = MetricGroups::All())
      : families_(&families), groups_(groups) {}
  explicit MetricSink(std::string& text, MetricGroups groups = MetricGroups::All())
      : text_(&text), groups_(groups) {}

  bool Wants(std::string_view area) const { return groups_.Contains(area); }
  Families* families() const { return families_; }  // null when writing text
  std::string* text() const { return text_; }       // null when building families

 private:
  Families* families_ = nullptr;
  std::string* text_ = nullptr;
  MetricGroups groups_;
};

void RenderEthtoolCounters(const Snapshot& snapshot, MetricSink& out);  // metrics_counters.cc
void RenderRdmaCounters(const Snapshot& snapshot, MetricSink& out);     // metrics_rdma.cc
void RenderDeviceInfo(const Snapshot& snapshot, MetricSink& out);       // metrics_device.cc
void RenderQos(const Snapshot& snapshot, MetricSink& out);              // metrics_qos.cc
void RenderDerived(const Snapshot& snapshot, MetricSink& out);          // metrics_derived.cc
void RenderTransceivers(const Snapshot& snapshot, MetricSink& out);     // metrics_transceiver.cc
void RenderLldp(const Snapshot& snapshot, MetricSink& out);             // metrics_lldp.cc
void RenderLink(const Snapshot& snapshot, MetricSink& out);             // metrics_link.cc
void RenderPcie(const Snapshot& snapshot, MetricSink& out);             // metrics_pcie.cc
void RenderGids(const Snapshot& snapshot, MetricSink& out);             // metrics_gids.cc
void RenderAttribution(const Snapshot& snapshot, MetricSink& out);      // metrics_attribution.cc
/// Self-metrics; `snapshot` is null before the first sample (build info only).
void RenderSelf(const Snapshot* snapshot, MetricSink& out);      // metrics_self.cc
void RenderServing(const ServingStats& stats, MetricSink& out);  // metrics_self.cc

/// Every family of one scrape into `out`, in catalogue order. Never throws on data; `snapshot`
/// and `serving` may be null.
void RenderSnapshot(const Snapshot* snapshot, const ServingStats* serving, MetricSink& out);

/// The same as prometheus-cpp families (tests: the data model TextSerializer writes).
Families RenderSnapshot(const Snapshot* snapshot, const ServingStats* serving = nullptr);

/// Label value for a priority / traffic class index without allocating for 0..7.
std::string_view IndexLabel(int index, std::string& storage);

}  // namespace roceqos
