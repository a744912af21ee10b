#pragma once

// Lookups into rendered metric families for the render tests: one family by name, one sample by
// its exact label set, the number of samples.

#include <prometheus/text_serializer.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

#include "exporter/render/metrics.h"

namespace roceqos::testing {

using LabelMap = std::map<std::string, std::string>;

inline const prometheus::MetricFamily* Find(const Families& families, std::string_view name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

inline LabelMap Labels(const prometheus::ClientMetric& m) {
  LabelMap out;
  for (const auto& l : m.label) out[l.name] = l.value;
  return out;
}

/// The value of the one sample of `family` whose labels are exactly `labels`; NaN if none.
inline double Value(const Families& families, std::string_view family, const LabelMap& labels) {
  const prometheus::MetricFamily* f = Find(families, family);
  if (f == nullptr) return std::nan("");
  for (const auto& m : f->metric) {
    if (Labels(m) != labels) continue;
    switch (f->type) {
      case prometheus::MetricType::Counter:
        return m.counter.value;
      case prometheus::MetricType::Gauge:
        return m.gauge.value;
      default:
        return m.untyped.value;
    }
  }
  return std::nan("");
}

/// The number of samples of `family` (0 when it is not rendered).
inline size_t Count(const Families& families, std::string_view family) {
  const prometheus::MetricFamily* f = Find(families, family);
  return f == nullptr ? 0 : f->metric.size();
}

/// The body /metrics serves: the direct text writer.
inline std::string DirectText(const Snapshot* snapshot, const ServingStats* serving = nullptr) {
  std::string text;
  MetricSink sink(text);
  RenderSnapshot(snapshot, serving, sink);
  return text;
}

/// prometheus-cpp's TextSerializer over the families of the same render: what DirectText must
/// equal byte for byte.
inline std::string SerializedText(const Snapshot* snapshot, const ServingStats* serving = nullptr) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, RenderSnapshot(snapshot, serving));
  return std::move(out).str();
}

}  // namespace roceqos::testing
