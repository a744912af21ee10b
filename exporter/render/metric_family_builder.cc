#include "exporter/render/metric_family_builder.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/utf8.h"
#include "exporter/render/text_format.h"

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

std::string_view TypeName(MetricKind kind) {
  switch (kind) {
    case MetricKind::kCounter:
      return "counter";
    case MetricKind::kGauge:
      return "gauge";
    case MetricKind::kUntyped:
      break;
  }
  return "untyped";
}

// Reads the next label value that Add() stored at `pos` and advances past it.
std::string_view NextLabel(const std::string& labels, size_t& pos) {
  uint32_t size = 0;
  std::memcpy(&size, labels.data() + pos, sizeof(size));
  pos += sizeof(size);
  const std::string_view value(labels.data() + pos, size);
  pos += size;
  return value;
}

}  // namespace

void FamilyBuilder::Add(std::initializer_list<std::string_view> label_values, double value) {
  if (label_values.size() != def_.label_count()) {
    assert(false && "label values do not match the metric table");
    return;
  }
  for (std::string_view v : label_values) {
    const auto size = static_cast<uint32_t>(v.size());
    labels_.append(reinterpret_cast<const char*>(&size), sizeof(size));
    labels_ += v;
  }
  values_.push_back(value);
}

void FamilyBuilder::AppendTo(MetricSink& out) {
  if (values_.empty() || !out.Wants(def_.area)) return;
  if (out.text() != nullptr) WriteText(*out.text());
  if (out.families() != nullptr) AppendFamily(*out.families());
}

// What prometheus::TextSerializer writes for the family AppendFamily() builds (HELP escaped as
// the format asks, which the table's one-line, backslash-free HELP texts never need).
void FamilyBuilder::WriteText(std::string& out) const {
  if (!def_.help.empty()) {
    out.append("# HELP ").append(def_.name).append(" ");
    AppendHelpText(out, def_.help);
    out += '\n';
  }
  out.append("# TYPE ").append(def_.name).append(" ").append(TypeName(def_.kind)).append("\n");
  const size_t label_count = def_.label_count();
  size_t pos = 0;
  for (double value : values_) {
    out += def_.name;
    for (size_t i = 0; i < label_count; ++i) {
      out += i == 0 ? '{' : ',';
      out.append(def_.labels[i]).append("=\"");
      AppendLabelValue(out, NextLabel(labels_, pos));
      out += '"';
    }
    if (label_count > 0) out += '}';
    out += ' ';
    AppendSampleValue(out, value);
    out += '\n';
  }
}

void FamilyBuilder::AppendFamily(Families& out) const {
  prometheus::MetricFamily& family = out.emplace_back();
  family.name = std::string(def_.name);
  family.help = ValidUtf8(def_.help);
  family.type = ToPrometheus(def_.kind);
  const size_t label_count = def_.label_count();
  family.metric.reserve(values_.size());
  size_t pos = 0;
  for (double value : values_) {
    prometheus::ClientMetric& metric = family.metric.emplace_back();
    metric.label.reserve(label_count);
    for (size_t i = 0; i < label_count; ++i) {
      // prometheus-cpp writes label bytes as they are: the same replacement as the text writer's
      // keeps the two paths' bodies equal and valid UTF-8.
      metric.label.push_back({std::string(def_.labels[i]), ValidUtf8(NextLabel(labels_, pos))});
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
}

}  // namespace roceqos
