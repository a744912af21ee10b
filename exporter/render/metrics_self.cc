// The exporter's own health: build, per-source durations/errors/availability, sampler budget.

#include <chrono>
#include <cstdint>
#include <map>
#include <string_view>
#include <utility>

#include "collectors/discovery.h"
#include "exporter/core/build_info.h"
#include "exporter/core/error_reason.h"
#include "exporter/render/metric_family_builder.h"
#include "exporter/render/metrics.h"

namespace roceqos {

static_assert(kRdmaPortsKeep == std::chrono::seconds(60),
              "the help of roce_exporter_rdma_ports_stale (metric_table.h) names the bound");

namespace {

void RenderProcess(const ProcessStats& p, MetricSink& out) {
  const std::pair<const MetricDef*, double> values[] = {
      {&FindMetric("process_cpu_seconds_total"), p.cpu_seconds},
      {&FindMetric("process_resident_memory_bytes"), p.resident_bytes},
      {&FindMetric("process_virtual_memory_bytes"), p.virtual_bytes},
      {&FindMetric("process_open_fds"), p.open_fds},
      {&FindMetric("process_max_fds"), p.max_fds},
      {&FindMetric("process_start_time_seconds"), p.start_time_seconds},
  };
  for (const auto& [def, value] : values) {
    FamilyBuilder family(*def);
    family.Add({}, value);
    family.AppendTo(out);
  }
}

}  // namespace

void RenderSelf(const Snapshot* snapshot, MetricSink& out) {
  FamilyBuilder build(FindMetric("roce_exporter_build_info"));
  build.Add({kVersion, kGitRevision}, 1);
  build.AppendTo(out);
  if (snapshot == nullptr) return;

  FamilyBuilder duration(FindMetric("roce_exporter_collect_duration_seconds"));
  FamilyBuilder available(FindMetric("roce_exporter_source_available"));
  for (const auto& [source, status] : snapshot->sources) {
    duration.Add({source}, status.last_duration_seconds);
    available.Add({source}, status.available ? 1 : 0);
  }
  // Counters exist at 0 from the moment their label set is known (docs/metrics.md): every reason
  // of the closed set for every source that has run, so rate() reads 0 instead of nothing.
  std::map<std::pair<std::string_view, std::string_view>, uint64_t> error_counts;
  for (const auto& [source, status] : snapshot->sources) {
    for (const auto& reason : kErrorReasonNames) error_counts[{source, reason.name}] = 0;
  }
  for (const auto& [key, count] : snapshot->errors) {
    error_counts[{key.source, ReasonName(key.reason)}] = count;
  }
  FamilyBuilder errors(FindMetric("roce_exporter_collect_errors_total"));
  for (const auto& [key, count] : error_counts) {
    errors.Add({key.first, key.second}, static_cast<double>(count));
  }
  const SamplerStatus& s = snapshot->sampler;
  FamilyBuilder period(FindMetric("roce_exporter_sample_period_seconds"));
  period.Add({}, s.effective_period_seconds);
  FamilyBuilder configured(FindMetric("roce_exporter_configured_sample_period_seconds"));
  configured.Add({}, s.configured_period_seconds);
  FamilyBuilder budget(FindMetric("roce_exporter_sample_budget_ratio"));
  budget.Add({}, s.budget_ratio);
  FamilyBuilder kernel(FindMetric("roce_exporter_sample_kernel_seconds"));
  kernel.Add({}, s.last_kernel_seconds);
  FamilyBuilder duty(FindMetric("roce_exporter_kernel_duty_cycle_ratio"));
  duty.Add({}, s.kernel_duty_cycle);
  FamilyBuilder overruns(FindMetric("roce_exporter_sample_overruns_total"));
  overruns.Add({}, static_cast<double>(s.overruns));
  FamilyBuilder stale(FindMetric("roce_exporter_rdma_ports_stale"));
  stale.Add({}, s.rdma_ports_stale ? 1 : 0);
  FamilyBuilder selected(FindMetric("roce_exporter_selected_devices"));
  selected.Add({}, static_cast<double>(snapshot->devices.size()));
  FamilyBuilder samples(FindMetric("roce_exporter_samples_total"));
  samples.Add({}, static_cast<double>(s.samples));
  FamilyBuilder taken(FindMetric("roce_exporter_last_sample_timestamp_seconds"));
  taken.Add({}, std::chrono::duration<double>(snapshot->taken_at.time_since_epoch()).count());

  for (FamilyBuilder* f : {&duration, &errors, &available, &period, &configured, &budget, &kernel,
                           &duty, &overruns, &stale, &selected, &samples, &taken}) {
    f->AppendTo(out);
  }
  if (snapshot->process) RenderProcess(*snapshot->process, out);
}

void RenderServing(const ServingStats& stats, MetricSink& out) {
  FamilyBuilder requests(FindMetric("roce_exporter_http_requests_total"));
  for (const auto& [code, count] : stats.requests_by_code) {
    requests.Add({code}, static_cast<double>(count));
  }
  FamilyBuilder in_flight(FindMetric("roce_exporter_http_requests_in_flight"));
  in_flight.Add({}, static_cast<double>(stats.in_flight));
  FamilyBuilder rejected(FindMetric("roce_exporter_http_requests_rejected_total"));
  rejected.Add({}, static_cast<double>(stats.rejected));
  FamilyBuilder bytes(FindMetric("roce_exporter_http_response_bytes_total"));
  bytes.Add({"gzip"}, static_cast<double>(stats.bytes_gzip));
  bytes.Add({"identity"}, static_cast<double>(stats.bytes_identity));
  FamilyBuilder render(FindMetric("roce_exporter_scrape_render_seconds"));
  render.Add({}, stats.render_seconds);
  FamilyBuilder renders(FindMetric("roce_exporter_scrape_renders_total"));
  renders.Add({}, static_cast<double>(stats.renders));
  FamilyBuilder scrapes(FindMetric("roce_exporter_scrapes_total"));
  for (size_t i = 0; i < kScrapeBodies; ++i) {
    scrapes.Add({kScrapeBodyNames[i]}, static_cast<double>(stats.scrapes[i]));
  }
  for (FamilyBuilder* f : {&requests, &in_flight, &rejected, &bytes, &render, &renders, &scrapes}) {
    f->AppendTo(out);
  }
}

}  // namespace roceqos
