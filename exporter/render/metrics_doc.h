#pragma once

#include <string>

namespace roceqos {

/// docs/metrics.md, generated from kMetricTable (`roce_qos_exporter --print-metrics-doc`).
std::string GenerateMetricsDoc();

}  // namespace roceqos
