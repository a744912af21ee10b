#include "exporter/render/metric_table.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "exporter/render/metrics_doc.h"

namespace roceqos {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

TEST(MetricTable, NamesFollowPrometheusConventions) {
  const std::regex name_re("roce_[a-z0-9_]*[a-z0-9]");
  // The process_* families keep the names every Prometheus client library gives them.
  const std::regex process_re("process_[a-z0-9_]*[a-z0-9]");
  std::set<std::string_view> names;
  for (const MetricDef& def : AllMetrics()) {
    const std::string name(def.name);
    SCOPED_TRACE(name);
    if (def.area == "process") {
      EXPECT_TRUE(std::regex_match(name, process_re)) << "process area: prefix process_";
    } else {
      EXPECT_TRUE(std::regex_match(name, name_re)) << "prefix roce_, snake_case";
    }
    EXPECT_TRUE(names.insert(def.name).second) << "declared twice";
    EXPECT_EQ(name.find("__"), std::string::npos);
    if (def.kind == MetricKind::kCounter) {
      EXPECT_TRUE(EndsWith(name, "_total")) << "counters end in _total";
    } else {
      EXPECT_FALSE(EndsWith(name, "_total")) << "only counters end in _total";
    }
    // promtool check metrics: "metric name should not include type" (client_golang promlint).
    for (const char* type : {"counter", "gauge", "histogram", "summary"}) {
      const std::string word = std::string("_") + type;
      EXPECT_FALSE(name.find(word + "_") != std::string::npos || EndsWith(name, word))
          << "the name holds the type word " << type;
    }
    if (EndsWith(name, "_info")) {
      EXPECT_EQ(def.kind, MetricKind::kGauge);
    }
    // Base units only: seconds, bytes, ratios.
    for (const char* non_base :
         {"_milliseconds", "_microseconds", "_nanoseconds", "_minutes", "_hours", "_kilobytes",
          "_megabytes", "_bits", "_percent", "_usec", "_msec", "_us_", "_ms_"}) {
      EXPECT_EQ(name.find(non_base), std::string::npos) << "non-base unit " << non_base;
    }
    if (name.rfind("roce_exporter_", 0) == 0) {
      EXPECT_EQ(def.area, "self");
    }
    if (def.area == "self") {
      EXPECT_EQ(name.rfind("roce_exporter_", 0), 0u);
    }
  }
}

TEST(MetricTable, HelpIsOneSafeSentence) {
  for (const MetricDef& def : AllMetrics()) {
    SCOPED_TRACE(std::string(def.name));
    EXPECT_FALSE(def.help.empty());
    // prometheus-cpp writes HELP unescaped: a newline or backslash would corrupt the exposition.
    EXPECT_EQ(def.help.find('\n'), std::string_view::npos);
    EXPECT_EQ(def.help.find('\\'), std::string_view::npos);
    EXPECT_TRUE(EndsWith(def.help, ".")) << "HELP is a sentence";
    EXPECT_FALSE(def.source.empty()) << "docs say where the value comes from";
    EXPECT_FALSE(def.area.empty());
  }
}

TEST(MetricTable, LabelNamesAreValidAndUnique) {
  const std::regex label_re("[a-z][a-z0-9_]*");
  for (const MetricDef& def : AllMetrics()) {
    SCOPED_TRACE(std::string(def.name));
    std::set<std::string_view> seen;
    for (size_t i = 0; i < def.labels.size(); ++i) {
      if (i >= def.label_count()) {
        EXPECT_TRUE(def.labels[i].empty()) << "no gaps in the label list";
        continue;
      }
      const std::string label(def.labels[i]);
      EXPECT_TRUE(std::regex_match(label, label_re)) << label;
      EXPECT_NE(label, "le");
      EXPECT_NE(label, "quantile");
      EXPECT_TRUE(seen.insert(def.labels[i]).second) << "duplicate label " << label;
    }
  }
}

TEST(MetricTable, FindMetricResolvesAtCompileTime) {
  constexpr const MetricDef& def = FindMetric("roce_pfc_pause_frames_total");
  static_assert(def.kind == MetricKind::kCounter);
  static_assert(def.label_count() == 3);
  EXPECT_EQ(def.labels[2], "direction");
}

TEST(MetricsDoc, DocsMetricsMdIsGeneratedFromTheTable) {
  const std::string path = std::string(ROCEQOS_SOURCE_DIR) + "/docs/metrics.md";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path << " is missing; generate it with: "
                         << "build/roce_qos_exporter --print-metrics-doc > docs/metrics.md";
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_TRUE(content.str() == GenerateMetricsDoc())
      << "docs/metrics.md is out of date with exporter/render/metric_table.h; regenerate it with: "
      << "build/roce_qos_exporter --print-metrics-doc > docs/metrics.md";
}

TEST(MetricsDoc, ListsEveryMetricWithItsSource) {
  const std::string doc = GenerateMetricsDoc();
  for (const MetricDef& def : AllMetrics()) {
    EXPECT_NE(doc.find("| `" + std::string(def.name) + "` |"), std::string::npos) << def.name;
  }
}

}  // namespace
}  // namespace roceqos
