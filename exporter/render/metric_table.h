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
  // ---- Port counters from ETHTOOL_GSTATS (mlx5 names, docs/kernel-interfaces.md §3) -------------
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

  // ---- RDMA port hw counters from RDMA_NLDEV_CMD_STAT_GET (docs/kernel-interfaces.md §5.4) ------
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
  {"roce_exporter_rdma_ports_stale", MetricKind::kGauge,
   "1 while listing RDMA ports fails and the last good list (at most 60 s old) stands in for it; "
   "0 with a fresh list, or once the kept list expired and was dropped.",
   {}, "self", "discovery (RDMA_NLDEV_CMD_PORT_GET)"},
  {"roce_exporter_selected_devices", MetricKind::kGauge,
   "Network devices the sampler reads (--collector.device-include/-exclude, else Mellanox PFs and "
   "RDMA-bound netdevs); 0 means the exporter watches nothing.",
   {}, "self", "discovery"},
  {"roce_exporter_samples_total", MetricKind::kCounter,
   "Samples taken since start.",
   {}, "self", "sampler"},
  {"roce_exporter_last_sample_timestamp_seconds", MetricKind::kGauge,
   "Unix time at which the served sample was taken.",
   {}, "self", "sampler"},
  {"roce_exporter_http_requests_total", MetricKind::kCounter,
   "HTTP requests answered by the exporter (every path), by status code; as of the render of the served body.",
   {"code"}, "self", "HTTP server"},
  {"roce_exporter_http_requests_in_flight", MetricKind::kGauge,
   "HTTP requests being handled when the served body was rendered.",
   {}, "self", "HTTP server"},
  {"roce_exporter_http_requests_rejected_total", MetricKind::kCounter,
   "HTTP requests answered 503 at once because --web.max-requests were already being handled.",
   {}, "self", "HTTP server, --web.max-requests"},
  {"roce_exporter_http_response_bytes_total", MetricKind::kCounter,
   "HTTP response body bytes written, by content encoding (gzip when the client accepted it).",
   {"encoding"}, "self", "HTTP server"},
  {"roce_exporter_scrape_render_seconds", MetricKind::kGauge,
   "Time the previous render of the exposition took (text, and gzip when asked for).",
   {}, "self", "exposition cache"},
  {"roce_exporter_scrape_renders_total", MetricKind::kCounter,
   "Renders of the exposition; at most one per published sample, whatever the number of scrapes.",
   {}, "self", "exposition cache"},

  // ---- QoS state and drift (QoS engineer: metrics_qos.cc) ----------------------------------------
  {"roce_qos_trust", MetricKind::kGauge,
   "Priority trust mode of a netdev: 1 on the current mode (dscp or pcp), 0 on the other.",
   {"netdev", "mode"}, "qos",
   "RTM_GETDCB IEEE_GET: DCB_ATTR_DCB_APP_TRUST_TABLE where present, else any DSCP APP entry (selector 5) means dscp"},
  {"roce_qos_pfc_enabled", MetricKind::kGauge,
   "Whether PFC is enabled on a priority (1) or not (0).",
   {"netdev", "prio"}, "qos", "DCB_ATTR_IEEE_PFC `ieee_pfc.pfc_en`"},
  {"roce_qos_pfc_cable_length_meters", MetricKind::kGauge,
   "Cable length the NIC sizes PFC headroom for (mlx5 reports meters in ieee_pfc.delay).",
   {"netdev"}, "qos", "DCB_ATTR_IEEE_PFC `ieee_pfc.delay` (`mlnx_qos --cable_len`)"},
  {"roce_qos_prio_tc", MetricKind::kGauge,
   "Traffic class a priority is mapped to.",
   {"netdev", "prio"}, "qos", "DCB_ATTR_IEEE_ETS `ieee_ets.prio_tc`"},
  {"roce_qos_ets_bandwidth_ratio", MetricKind::kGauge,
   "Transmit bandwidth share of a traffic class (0 to 1; meaningful for ETS traffic classes).",
   {"netdev", "tc"}, "qos", "DCB_ATTR_IEEE_ETS `ieee_ets.tc_tx_bw` (percent / 100)"},
  {"roce_qos_ets_tsa", MetricKind::kGauge,
   "Transmission selection algorithm of a traffic class: 1 on the current one.",
   {"netdev", "tc", "tsa"}, "qos", "DCB_ATTR_IEEE_ETS `ieee_ets.tc_tsa` (strict, cbs, ets, vendor)"},
  {"roce_qos_dscp_prio", MetricKind::kGauge,
   "Priority a DSCP value is mapped to (the lowest when the APP table holds several).",
   {"netdev", "dscp"}, "qos", "DCB_ATTR_IEEE_APP_TABLE entries with selector 5 (IEEE_8021QAZ_APP_SEL_DSCP)"},
  {"roce_qos_prio_buffer", MetricKind::kGauge,
   "Receive buffer a priority is mapped to.",
   {"netdev", "prio"}, "qos", "DCB_ATTR_DCB_BUFFER `dcbnl_buffer.prio2buffer`"},
  {"roce_qos_buffer_size_bytes", MetricKind::kGauge,
   "Size of a receive buffer.",
   {"netdev", "buffer"}, "qos", "DCB_ATTR_DCB_BUFFER `dcbnl_buffer.buffer_size`"},
  {"roce_qos_buffer_total_bytes", MetricKind::kGauge,
   "Total receive buffer the port can distribute.",
   {"netdev"}, "qos", "DCB_ATTR_DCB_BUFFER `dcbnl_buffer.total_size`"},
  {"roce_qos_maxrate_bytes_per_second", MetricKind::kGauge,
   "Transmit rate limit of a traffic class; 0 means unlimited.",
   {"netdev", "tc"}, "qos", "DCB_ATTR_IEEE_MAXRATE `ieee_maxrate.tc_maxrate` (Kbit/s, exported in bytes/s)"},
  {"roce_qos_dcbx_mode", MetricKind::kGauge,
   "DCBX mode of a netdev: 1 on the current mode (host, firmware or lld_managed).",
   {"netdev", "mode"}, "qos", "DCB_ATTR_DCBX (DCB_CAP_DCBX_HOST / _LLD_MANAGED bits)"},
  {"roce_qos_roce_tos", MetricKind::kGauge,
   "Default ToS byte of RoCE traffic on an RDMA port (DSCP << 2 | ECN).",
   {"device", "port"}, "qos",
   "MOFED `/sys/class/infiniband/<dev>/tc/<port>/traffic_class`, else rdma_cm configfs `default_roce_tos`"},
  {"roce_qos_dcqcn_enabled", MetricKind::kGauge,
   "Whether the DCQCN notification point (np) or reaction point (rp) is enabled on a priority.",
   {"netdev", "prio", "role"}, "qos", "MOFED `/sys/class/net/<if>/ecn/roce_{np,rp}/enable/<prio>`"},
  {"roce_qos_cnp_dscp", MetricKind::kGauge,
   "DSCP of the CNPs the notification point sends.",
   {"netdev"}, "qos", "MOFED `/sys/class/net/<if>/ecn/roce_np/cnp_dscp`"},
  {"roce_qos_cnp_prio", MetricKind::kGauge,
   "802.1p priority of the CNPs the notification point sends.",
   {"netdev"}, "qos", "MOFED `/sys/class/net/<if>/ecn/roce_np/cnp_802p_prio`"},
  // ---- DCQCN rate-control parameters (MOFED ecn/roce_rp, ecn/roce_np; docs/policy.md) ----------
  {"roce_qos_dcqcn_param", MetricKind::kGauge,
   "A DCQCN rate-control parameter of a netdev (reaction point roce_rp, notification point roce_np), raw value in the unit of its file: microseconds for rpg_time_reset, dce_tcp_rtt, rreduce_mperiod and min_time_between_cnps; Mbit/s for rpg_ai_rate, rpg_hai_rate, rpg_min_rate, rpg_max_rate and rate2set_fcnp; bytes for rpg_byte_reset; percent for rpg_min_dec_fac; 1/1024 for dce_tcp_g and initial_alpha_value; a count for rpg_threshold; an exponent for rpg_gd; 0/1 for clamp_tgt_rate*.",
   {"netdev", "role", "param"}, "qos",
   "MOFED `/sys/class/net/<if>/ecn/roce_rp/<param>`, `ecn/roce_np/min_time_between_cnps` (QoS poll; none without MOFED: upstream keeps them in debugfs `cc_params`, not read)"},
  {"roce_qos_dcqcn_param_drift", MetricKind::kGauge,
   "Whether a DCQCN parameter the policy lists differs from it (1) or matches (0); no series while its file is absent or unreadable.",
   {"netdev", "role", "param"}, "qos", "drift engine (policy key `dcqcn_params`)"},
  // ---- end DCQCN parameters ------------------------------------------------------------------------
  {"roce_qos_tcp_ecn", MetricKind::kGauge,
   "The net.ipv4.tcp_ecn sysctl of the exporter's network namespace.",
   {}, "qos", "`/proc/sys/net/ipv4/tcp_ecn`"},
  {"roce_qos_pfc_storm_prevention_timeout_seconds", MetricKind::kGauge,
   "PFC storm prevention timeout of the NIC (mode auto, fixed or disabled; auto is 0.1 s on mlx5).",
   {"netdev", "mode"}, "qos", "ETHTOOL_GTUNABLE ETHTOOL_PFC_PREVENTION_TOUT (ms; 0xffff = auto, 0 = disabled)"},
  {"roce_qos_drift", MetricKind::kGauge,
   "Whether a policy field of a netdev differs from the policy (1) or matches (0); no series while the field cannot be verified or read.",
   {"netdev", "field"}, "qos", "drift engine (docs/policy.md)"},
  {"roce_qos_observed_absent", MetricKind::kGauge,
   "Whether a checked policy field cannot be verified on this device (its source does not exist, e.g. MOFED-only sysfs); not drift.",
   {"netdev", "field"}, "qos", "drift engine"},
  {"roce_qos_observed_unreadable", MetricKind::kGauge,
   "Whether the source of a checked policy field exists but could not be read.",
   {"netdev", "field"}, "qos", "drift engine"},
  {"roce_qos_in_sync", MetricKind::kGauge,
   "Whether no checked policy field of a netdev differs and none is unreadable (unverifiable fields do not count).",
   {"netdev"}, "qos", "drift engine"},
  {"roce_qos_drift_events_total", MetricKind::kCounter,
   "Times a policy field of a netdev entered drift.",
   {"netdev", "field"}, "qos", "drift engine"},
  {"roce_qos_last_change_timestamp_seconds", MetricKind::kGauge,
   "Unix time the observed QoS configuration of a netdev last changed (exporter start counts).",
   {"netdev"}, "qos", "drift engine"},
  {"roce_qos_policy_info", MetricKind::kGauge,
   "The policy rule and fingerprint of the effective policy of a netdev; always 1.",
   {"netdev", "rule", "hash"}, "qos", "policy (--config); FNV-1a 64 of the canonical policy"},
  {"roce_qos_state_info", MetricKind::kGauge,
   "Fingerprint of the observed QoS configuration of a netdev; always 1.",
   {"netdev", "hash"}, "qos", "drift engine; FNV-1a 64 of the observed configuration"},
  {"roce_qos_policy_reload_success", MetricKind::kGauge,
   "Whether the last policy load or reload succeeded (0: the last good policy stays in force).",
   {}, "qos", "SIGHUP, POST /-/reload"},
  {"roce_qos_policy_reload_timestamp_seconds", MetricKind::kGauge,
   "Unix time of the last policy load or reload attempt.",
   {}, "qos", "SIGHUP, POST /-/reload"},
  {"roce_qos_detection_latency_seconds", MetricKind::kGauge,
   "Time from the last DCB or link notification to the snapshot that shows its effect.",
   {}, "qos", "RTNLGRP_DCB / RTNLGRP_LINK monitor"},
  {"roce_qos_detection_latency_max_seconds", MetricKind::kGauge,
   "Largest notification-to-snapshot time since start.",
   {}, "qos", "RTNLGRP_DCB / RTNLGRP_LINK monitor"},
  {"roce_qos_change_notifications_total", MetricKind::kCounter,
   "DCB and link change notifications received.",
   {}, "qos", "RTNLGRP_DCB / RTNLGRP_LINK monitor"},
  {"roce_qos_monitor_resyncs_total", MetricKind::kCounter,
   "Monitor reads that lost notifications (reason: overflow = ENOBUFS, read_error = other "
   "recvmsg or framing error, malformed = unparseable message) and made the exporter re-read "
   "every device.",
   {"reason"}, "qos", "RTNLGRP_DCB / RTNLGRP_LINK monitor"},
  {"roce_qos_monitor_up", MetricKind::kGauge,
   "Whether change notifications are received (0: the exporter relies on polling alone).",
   {}, "qos", "RTNLGRP_DCB / RTNLGRP_LINK monitor"},
  {"roce_qos_remediation_mode", MetricKind::kGauge,
   "The --remediation mode: 1 on the current one (off, dry-run or enforce).",
   {"mode"}, "qos", "--remediation"},
  {"roce_qos_remediation_state", MetricKind::kGauge,
   "Remediation state of a netdev: 1 on the current state (not exported with --remediation=off).",
   {"netdev", "state"}, "qos", "remediator (docs/policy.md)"},
  {"roce_qos_remediation_given_up", MetricKind::kGauge,
   "Whether remediation gave up on a netdev after repeated attempts that did not hold.",
   {"netdev"}, "qos", "remediator"},
  {"roce_qos_remediations_total", MetricKind::kCounter,
   "Remediation actions by field and result (success, failed, mismatch, skipped, dry_run).",
   {"netdev", "field", "result"}, "qos", "remediator"},
  {"roce_qos_remediation_interrupted_apply", MetricKind::kGauge,
   "1 when the previous process was killed in the middle of an apply to the netdev (state file), "
   "until the netdev reads in sync again.",
   {"netdev"}, "qos", "remediator state file (docs/remediation.md)"},
  {"roce_qos_remediation_enforce_held_elsewhere", MetricKind::kGauge,
   "1 when --remediation=enforce was asked for but another instance holds the node's enforce "
   "lock, so this one only observes.",
   {}, "qos", "--remediation.lock-file flock"},
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
