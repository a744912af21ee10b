#pragma once

// The one table of every metric family the exporter serves. docs/metrics.md is generated from it
// (`roce_qos_exporter --print-metrics-doc`), unit tests check the naming rules against it, and
// renderers look their family up by name at compile time (MetricDef<"...">()), so a family that
// is rendered but not declared here does not compile.
//
// Adding a family: append a row in the section of your area (QoS and derived signals have their
// own sections), render it in your metrics_<area>.cc, regenerate docs/metrics.md.

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace roceqos {

enum class MetricKind { kCounter, kGauge, kUntyped };

struct MetricDef {
  std::string_view name;
  MetricKind kind;
  std::string_view help;  // one line, no backslash: prometheus-cpp writes HELP unescaped
  std::array<std::string_view, 6> labels;  // label names in rendering order; unused slots empty
  std::string_view area;                   // section in docs/metrics.md
  std::string_view source;                 // where the value comes from (docs only)

  constexpr size_t label_count() const {
    size_t n = 0;
    while (n < labels.size() && !labels[n].empty()) ++n;
    return n;
  }
};

// clang-format off
inline constexpr MetricDef kMetricTable[] = {
  // ---- Port counters from ETHTOOL_GSTATS (mlx5 names, reference §3) -----------------------------
  {"roce_pfc_pause_frames_total", MetricKind::kCounter,
   "PFC pause frames received (rx) or sent (tx) on a priority.",
   {"netdev", "prio", "direction"}, "ethtool", "`rx_prio<N>_pause`, `tx_prio<N>_pause`"},
  {"roce_pfc_pause_duration_seconds_total", MetricKind::kCounter,
   "Time a priority was paused by received (rx) or sent (tx) PFC frames.",
   {"netdev", "prio", "direction"}, "ethtool",
   "`rx_prio<N>_pause_duration`, `tx_prio<N>_pause_duration` (microseconds, exported in seconds)"},
  {"roce_pfc_pause_transitions_total", MetricKind::kCounter,
   "Transitions of a priority between paused and unpaused (received PFC).",
   {"netdev", "prio"}, "ethtool", "`rx_prio<N>_pause_transition`"},
  {"roce_prio_packets_total", MetricKind::kCounter,
   "Packets received (rx) or sent (tx) on a priority.",
   {"netdev", "prio", "direction"}, "ethtool", "`rx_prio<N>_packets`, `tx_prio<N>_packets`"},
  {"roce_prio_bytes_total", MetricKind::kCounter,
   "Bytes received (rx) or sent (tx) on a priority.",
   {"netdev", "prio", "direction"}, "ethtool", "`rx_prio<N>_bytes`, `tx_prio<N>_bytes`"},
  {"roce_prio_discards_total", MetricKind::kCounter,
   "Received packets of a priority discarded by the port.",
   {"netdev", "prio"}, "ethtool", "`rx_prio<N>_discards`"},
  {"roce_tc_discards_total", MetricKind::kCounter,
   "Received packets of a traffic class discarded for lack of buffer or by congestion (WRED).",
   {"netdev", "tc", "reason"}, "ethtool",
   "`rx_prio<N>_buf_discard` (reason=buffer), `rx_prio<N>_cong_discard` (reason=congestion); "
   "indexed by traffic class despite the name"},
  {"roce_tc_ecn_marked_packets_total", MetricKind::kCounter,
   "Packets of a traffic class marked ECN CE by the port.",
   {"netdev", "tc"}, "ethtool", "`rx_prio<N>_marked` (per traffic class)"},
  {"roce_global_pause_frames_total", MetricKind::kCounter,
   "Link-level (802.3x) pause frames received (rx) or sent (tx); present while global pause is on.",
   {"netdev", "direction"}, "ethtool", "`rx_global_pause`, `tx_global_pause`"},
  {"roce_global_pause_duration_seconds_total", MetricKind::kCounter,
   "Time the link was paused by link-level pause frames received (rx) or sent (tx).",
   {"netdev", "direction"}, "ethtool",
   "`rx_global_pause_duration`, `tx_global_pause_duration` (microseconds, exported in seconds)"},
  {"roce_pause_storm_events_total", MetricKind::kCounter,
   "PFC storm prevention events raised by the NIC (warning) or that stopped pause sending (error).",
   {"netdev", "severity"}, "ethtool",
   "`tx_pause_storm_warning_events`, `tx_pause_storm_error_events`"},
  {"roce_port_discards_total", MetricKind::kCounter,
   "Packets discarded by the physical port on receive (rx) or transmit (tx).",
   {"netdev", "direction"}, "ethtool", "`rx_discards_phy`, `tx_discards_phy`"},
  {"roce_port_rx_out_of_buffer_packets_total", MetricKind::kCounter,
   "Received packets dropped because no Ethernet receive descriptor was posted (not RoCE).",
   {"netdev"}, "ethtool", "`rx_out_of_buffer`"},
  {"roce_port_rx_buffer_passed_threshold_total", MetricKind::kCounter,
   "Times the port receive buffer passed its almost-full threshold.",
   {"netdev"}, "ethtool", "`rx_buffer_passed_thres_phy`"},
  {"roce_ethtool_string_set_changes_total", MetricKind::kCounter,
   "Times the ethtool statistics name set of a device changed since it was first seen "
   "(mlx5 adds and removes per-priority pause counters when PFC is reconfigured).",
   {"netdev"}, "ethtool", "ETHTOOL_GSSET_INFO / ETHTOOL_GSTRINGS re-reads"},
  {"roce_ethtool_stat", MetricKind::kUntyped,
   "Raw ethtool statistic not mapped to a roce_ family, exported only when its name matches "
   "--collector.ethtool.raw-include; the kernel does not say whether it is a counter.",
   {"netdev", "stat"}, "ethtool", "any `ethtool -S` name (opt-in)"},

  // ---- RDMA port hw counters from RDMA_NLDEV_CMD_STAT_GET (reference §5.4) ----------------------
  {"roce_cnp_sent_total", MetricKind::kCounter,
   "Congestion notification packets sent by this port as DCQCN notification point.",
   {"device", "port"}, "rdma", "`np_cnp_sent`"},
  {"roce_cnp_handled_total", MetricKind::kCounter,
   "Congestion notification packets handled by this port as DCQCN reaction point.",
   {"device", "port"}, "rdma", "`rp_cnp_handled`"},
  {"roce_cnp_ignored_total", MetricKind::kCounter,
   "Congestion notification packets received and ignored by this port as DCQCN reaction point.",
   {"device", "port"}, "rdma", "`rp_cnp_ignored`"},
  {"roce_ecn_marked_packets_total", MetricKind::kCounter,
   "RoCE packets received with ECN CE marked, seen by this port as DCQCN notification point.",
   {"device", "port"}, "rdma", "`np_ecn_marked_roce_packets`"},
  {"roce_rdma_hw_counter_total", MetricKind::kCounter,
   "Every other RDMA port hardware counter, by its kernel name (as in rdma statistic show link).",
   {"device", "port", "counter"}, "rdma",
   "every other RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY (mlx5: out_of_sequence, packet_seq_err, "
   "...; rxe: sent_pkts, rcvd_pkts, ...)"},

  // ---- Inventory from discovery ------------------------------------------------------------------
  {"roce_netdev_info", MetricKind::kGauge,
   "Selected network device with its driver, PCI address, role and operational state; always 1.",
   {"netdev", "driver", "pci", "role", "state", "master"}, "device",
   "RTM_GETLINK, ETHTOOL_GDRVINFO, sysfs"},
  {"roce_device_info", MetricKind::kGauge,
   "RDMA port bound to a selected network device, with the port state; always 1.",
   {"device", "port", "netdev", "pci", "role", "state"}, "device",
   "RDMA_NLDEV_CMD_PORT_GET (RDMA_NLDEV_ATTR_NDEV_NAME, RDMA_NLDEV_ATTR_PORT_STATE)"},

  // ---- Exporter self-metrics ---------------------------------------------------------------------
  {"roce_exporter_build_info", MetricKind::kGauge,
   "Version and git revision of the running exporter; always 1.",
   {"version", "revision"}, "self", "build"},
  {"roce_exporter_collect_duration_seconds", MetricKind::kGauge,
   "Wall time spent in a source during its last run (all devices of one sample).",
   {"source"}, "self", "sampler"},
  {"roce_exporter_collect_errors_total", MetricKind::kCounter,
   "Failed reads of a source, by reason.",
   {"source", "reason"}, "self", "sampler"},
  {"roce_exporter_source_available", MetricKind::kGauge,
   "Whether a source can be read at all on this host (0 e.g. when the kernel has no RDMA netlink).",
   {"source"}, "self", "sampler"},
  {"roce_exporter_sample_period_seconds", MetricKind::kGauge,
   "Effective sample period; longer than configured while the sampler backs off for its budget.",
   {}, "self", "sampler"},
  {"roce_exporter_configured_sample_period_seconds", MetricKind::kGauge,
   "Sample period set by --sampler.period.",
   {}, "self", "--sampler.period"},
  {"roce_exporter_sample_budget_ratio", MetricKind::kGauge,
   "Share of the effective period the kernel calls of one sample may take (--sampler.budget).",
   {}, "self", "--sampler.budget"},
  {"roce_exporter_sample_kernel_seconds", MetricKind::kGauge,
   "Time spent in kernel calls by the last sample, compared with the budget.",
   {}, "self", "sampler"},
  {"roce_exporter_sample_overruns_total", MetricKind::kCounter,
   "Samples whose kernel calls took longer than the budget allows.",
   {}, "self", "sampler"},
  {"roce_exporter_samples_total", MetricKind::kCounter,
   "Samples taken since start.",
   {}, "self", "sampler"},
  {"roce_exporter_last_sample_timestamp_seconds", MetricKind::kGauge,
   "Unix time at which the served sample was taken.",
   {}, "self", "sampler"},

  // ---- QoS state and drift (QoS engineer: metrics_qos.cc) ----------------------------------------
  // ---- Derived windowed signals and storms (signals engineer: metrics_derived.cc) ----------------
  {"roce_pfc_pause_rate_peak", MetricKind::kGauge,
   "Highest PFC pause frame rate, in frames per second, of any sampling interval in the window.",
   {"netdev", "prio", "direction", "window"}, "derived",
   "sampler: max over the window of delta pause frames / delta t"},
  {"roce_pfc_paused_ratio", MetricKind::kGauge,
   "Highest share (0 to 1) of any sampling interval in the window that the priority was paused.",
   {"netdev", "prio", "direction", "window"}, "derived",
   "sampler: max over the window of delta pause duration / delta t, clamped to [0, 1]"},
  {"roce_pfc_to_ecn_ratio", MetricKind::kGauge,
   "Pause frames on lossless priorities per ECN-marked RoCE packet or handled CNP in the window "
   "(denominator at least 1, never NaN); absent when ECN counters are unknown.",
   {"netdev", "window"}, "derived",
   "sampler: lossless pause frames / max(np_ecn_marked_roce_packets + rp_cnp_handled, 1)"},
  {"roce_ecn_silent", MetricKind::kGauge,
   "1 when lossless priorities had pause frames in the window while the RDMA port counted no "
   "ECN-marked packet and handled no CNP.",
   {"netdev", "window"}, "derived", "sampler: pause frames > 0 and ECN marks + CNPs == 0"},
  {"roce_cnp_to_ecn_ratio", MetricKind::kGauge,
   "CNPs sent per ECN-marked RoCE packet received in the window (denominator at least 1); "
   "healthy between 0 and 1.",
   {"device", "port", "window"}, "derived",
   "sampler: np_cnp_sent / max(np_ecn_marked_roce_packets, 1)"},
  {"roce_pfc_storm", MetricKind::kGauge,
   "1 while the PFC storm state machine holds the priority and direction in a storm.",
   {"netdev", "prio", "direction"}, "derived",
   "storm state machine (--storm.threshold, --storm.detection-time, --storm.restoration-time, "
   "tx_pause_storm_*_events)"},
  {"roce_pfc_storms_total", MetricKind::kCounter,
   "PFC storm episodes detected since the exporter started watching the device.",
   {"netdev", "prio", "direction"}, "derived", "storm state machine"},
  {"roce_pfc_storm_last_duration_seconds", MetricKind::kGauge,
   "Length of the last completed PFC storm episode, from onset to the last stormed interval "
   "(0 before the first).",
   {"netdev", "prio", "direction"}, "derived", "storm state machine"},
  {"roce_derived_intervals_discarded_total", MetricKind::kCounter,
   "Sampling intervals left out of the derived signals, by reason (counter_reset, "
   "identity_change, clock, implausible).",
   {"netdev", "reason"}, "derived", "sampler: counter step rules (docs/signals.md)"},
};
// clang-format on

inline constexpr std::span<const MetricDef> AllMetrics() { return kMetricTable; }

/// Compile-time lookup: FindMetric("roce_x_total") fails to compile when the name is not in the
/// table (a consteval function cannot run off the end of the array).
consteval const MetricDef& FindMetric(std::string_view name) {
  for (const MetricDef& def : kMetricTable) {
    if (def.name == name) return def;
  }
  throw "metric not declared in kMetricTable";  // never reached in a valid constant evaluation
}

}  // namespace roceqos
