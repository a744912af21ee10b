#pragma once

// Metric groups, for `GET /metrics?collect[]=<group>`: the areas of the metric table
// (metric_table.h), which are the sections of docs/metrics.md. A site can scrape the fast
// signals often and the slow QoS state seldom from two jobs, as node_exporter's collect[] allows.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.h"

namespace roceqos {

/// Every group, in docs/metrics.md order. tests/unit/exporter/render/metric_groups_test.cc checks
/// that every table entry's area is one of them.
inline constexpr std::array<std::string_view, 13> kMetricGroupNames = {
    "ethtool", "rdma", "device", "transceiver", "lldp", "process",    "derived",
    "qos",     "self", "link",   "pcie",        "gids", "attribution"};

/// A set of groups.
class MetricGroups {
 public:
  static constexpr MetricGroups All() { return MetricGroups((1u << kMetricGroupNames.size()) - 1); }
  static constexpr MetricGroups None() { return MetricGroups(0); }
  /// The group of that name; nullopt for a name that is not in kMetricGroupNames.
  static std::optional<MetricGroups> Named(std::string_view name);

  /// Whether a table entry of that area belongs to the set.
  bool Contains(std::string_view area) const;
  bool empty() const { return bits_ == 0; }
  uint32_t bits() const { return bits_; }
  MetricGroups& operator|=(MetricGroups other) {
    bits_ |= other.bits_;
    return *this;
  }
  bool operator==(const MetricGroups&) const = default;

 private:
  explicit constexpr MetricGroups(uint32_t bits) : bits_(bits) {}
  uint32_t bits_;
};

/// The groups a /metrics query string (what follows '?', still percent-encoded) selects: the
/// union of its `collect[]` parameters, every group when there is none. Other parameters are
/// ignored, as node_exporter ignores them. An unknown or empty group name is an Error whose
/// message is the one-line reason for the 400.
Result<MetricGroups> CollectGroups(std::string_view query);

}  // namespace roceqos
