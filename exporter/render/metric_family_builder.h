#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/render/metric_table.h"
#include "exporter/render/metrics.h"

namespace roceqos {

/// Collects the samples of one table entry, then hands the family to a MetricSink. Label names
/// come from the table, so a renderer only supplies values, in the table's label order. The
/// samples are kept as plain values (label bytes in one buffer, one double each) so that writing
/// the text costs no prometheus-cpp structures.
class FamilyBuilder {
 public:
  explicit FamilyBuilder(const MetricDef& def) : def_(def) {}

  /// Adds one sample. A call with the wrong number of label values is a programming error: it is
  /// dropped (and fails the renderer unit tests, which compare every sample with the table).
  void Add(std::initializer_list<std::string_view> label_values, double value);
  bool empty() const { return values_.empty(); }
  size_t size() const { return values_.size(); }

  /// Hands the family to `out` unless it has no samples (an empty family would be a HELP/TYPE
  /// header for series that no longer exist) or `out` does not want its area.
  void AppendTo(MetricSink& out);

 private:
  void WriteText(std::string& out) const;
  void AppendFamily(Families& out) const;

  const MetricDef& def_;
  // Per sample, per label: the value's length (4 bytes, host order), then its bytes.
  std::string labels_;
  std::vector<double> values_;
};

}  // namespace roceqos
