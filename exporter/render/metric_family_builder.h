#pragma once

#include <prometheus/metric_family.h>

#include <initializer_list>
#include <string_view>
#include <vector>

#include "exporter/render/metric_table.h"

namespace roceqos {

/// Builds one fresh MetricFamily for a table entry. Label names come from the table, so a renderer
/// only supplies values, in the table's label order.
class FamilyBuilder {
 public:
  explicit FamilyBuilder(const MetricDef& def);

  /// Adds one sample. A call with the wrong number of label values is a programming error: it is
  /// dropped (and fails the renderer unit tests, which compare every sample with the table).
  void Add(std::initializer_list<std::string_view> label_values, double value);
  bool empty() const { return family_.metric.empty(); }
  size_t size() const { return family_.metric.size(); }

  /// Moves the family into `out` unless it has no samples (an empty family would be a HELP/TYPE
  /// header for series that no longer exist).
  void AppendTo(std::vector<prometheus::MetricFamily>& out);

 private:
  const MetricDef& def_;
  prometheus::MetricFamily family_;
};

}  // namespace roceqos
