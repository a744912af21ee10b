#include "exporter/render/metric_family_builder.h"

#include <cassert>
#include <string>

namespace roceqos {
namespace {

prometheus::MetricType ToPrometheus(MetricKind kind) {
  switch (kind) {
    case MetricKind::kCounter:
      return prometheus::MetricType::Counter;
    case MetricKind::kGauge:
      return prometheus::MetricType::Gauge;
    case MetricKind::kUntyped:
      break;
  }
  return prometheus::MetricType::Untyped;
}

}  // namespace

FamilyBuilder::FamilyBuilder(const MetricDef& def) : def_(def) {
  family_.name = std::string(def.name);
  family_.help = std::string(def.help);
  family_.type = ToPrometheus(def.kind);
}

void FamilyBuilder::Add(std::initializer_list<std::string_view> label_values, double value) {
  if (label_values.size() != def_.label_count()) {
    assert(false && "label values do not match the metric table");
    return;
  }
  prometheus::ClientMetric& metric = family_.metric.emplace_back();
  metric.label.reserve(label_values.size());
  size_t i = 0;
  for (std::string_view v : label_values) {
    metric.label.push_back({std::string(def_.labels[i++]), std::string(v)});
  }
  switch (def_.kind) {
    case MetricKind::kCounter:
      metric.counter.value = value;
      break;
    case MetricKind::kGauge:
      metric.gauge.value = value;
      break;
    case MetricKind::kUntyped:
      metric.untyped.value = value;
      break;
  }
}

void FamilyBuilder::AppendTo(std::vector<prometheus::MetricFamily>& out) {
  if (!family_.metric.empty()) out.push_back(std::move(family_));
}

}  // namespace roceqos
