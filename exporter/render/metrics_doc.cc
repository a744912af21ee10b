#include "exporter/render/metrics_doc.h"

#include <fmt/format.h>

#include <vector>

#include "base/enum_names.h"
#include "exporter/qos/qos_fields.h"
#include "exporter/render/metric_table.h"

namespace roceqos {
namespace {

struct Area {
  std::string_view id;
  std::string_view title;
  std::string_view intro;
};

constexpr Area kAreas[] = {
    {"ethtool", "Port counters (ethtool)",
     "One `ETHTOOL_GSTATS` per selected netdev per sample. The mlx5 `ethtool -S` names are mapped "
     "once per string-set generation (collectors/ethtool_map.h). Per-priority pause counters "
     "exist only while PFC is enabled on the priority, so their series come and go with the PFC "
     "configuration; `roce_tc_*` are indexed by traffic class although mlx5 names them `prio`."},
    {"rdma", "RDMA port counters",
     "One `RDMA_NLDEV_CMD_STAT_GET` per RDMA port bound to a selected netdev per sample, the same "
     "values as `rdma statistic show link <dev>/<port>`. The four DCQCN counters have their own "
     "families; every other hw counter is `roce_rdma_hw_stat_total{stat=\"<kernel name>\"}`. "
     "Nothing is exported when the kernel has no RDMA netlink "
     "(`roce_exporter_source_available{source=\"rdma\"} 0`)."},
    {"device", "Inventory",
     "From discovery (every `--sampler.discovery-interval`, and at once when a device vanishes)."},
    {"transceiver", "Transceivers (module EEPROM)",
     "Read by the transceiver poller on its own thread every `--transceiver.interval` (default "
     "`1m`, `0` = off), never by the counter sampler: SFF-8636 (QSFP28/QSFP56) and CMIS "
     "(QSFP-DD/OSFP) diagnostics as `ethtool -m` shows them, in base units, with the module's own "
     "flags and thresholds. A netdev without a module EEPROM, or whose last read failed, has no "
     "series. Needs `CAP_NET_ADMIN`. Details: [transceiver.md](transceiver.md)."},
    {"lldp", "LLDP: the switch port",
     "Asked of the host's lldpd (through liblldpctl, loaded at run time) by the LLDP poller on its "
     "own thread every `--lldp.interval` (default `10s`, `0` = off): the neighbour of each "
     "selected netdev, the PFC, ETS and DSCP->priority the switch port advertises in its IEEE "
     "802.1Qaz TLVs, its maximum frame size, and `roce_qos_switch_mismatch`, the NIC against "
     "the switch. A netdev without a neighbour has only `roce_lldp_neighbor_present 0` and its "
     "reason. Needs read access to lldpd's socket (group `_lldpd`). Details: [lldp.md](lldp.md)."},
    {"process", "Process",
     "The standard `process_*` families every Prometheus client library exports, with the same "
     "names and meaning, for the exporter process itself: read from its own `/proc/self` (not "
     "`--path.procfs`, which names the host's procfs for `tcp_ecn`) by the `process` sample stage "
     "on the sampler thread every 5 s (so they are at most 5 s old), and a scrape reads no file. "
     "No series until the first good read."},
    {"derived", "Derived signals (sampler)",
     "Computed on the sampler thread from consecutive samples (`--sampler.period`), which a "
     "scrape cannot see: per-interval peaks over sliding windows (`window` label, "
     "`--derive.windows`, default `15s` and `1m`; read a window at least as long as your scrape "
     "interval), PFC against ECN per DCQCN role and the PFC storm state machine. Exact "
     "definitions: "
     "[signals.md](signals.md)."},
    {"self", "Exporter self-metrics",
     "`source` is one of `discovery`, `ethtool`, `rdma` (and the sources of later sample stages); "
     "`reason` is one of `device_gone`, `not_supported`, `permission`, `unavailable`, `busy`, "
     "`malformed`, `exception`, `other`."},
    {"link", "Link health",
     "Read over ethtool netlink (`ETHTOOL_MSG_FEC_GET`, `ETHTOOL_MSG_STATS_GET` eth-phy and "
     "eth-mac, `ETHTOOL_MSG_LINKSTATE_GET`) by the link poller on its own thread every "
     "`--link.interval` (default `10s`, `0` = off), else from mlx5's `ethtool -S` names of every "
     "sample; `source` (`netlink` or `ethtool`) says which served the figure. FEC blocks and "
     "mode exist through netlink only; the pre-FEC BER needs `rx_corrected_bits_phy` and "
     "`rx_bits_phy`. Details: [link.md](link.md)."},
    {"pcie", "PCIe link and AER, GPUs near each NIC",
     "Read from sysfs by the PCIe poller on its own thread every `--pcie.interval` (default `30s`, "
     "`0` = off), never by the counter sampler and never through firmware: each selected netdev's "
     "PCI function (`/sys/class/net/<if>/device`) and its upstream port (the PCI bridge above "
     "it). `bound=\"max\"` is the lower of the two ends' maximums, what the link can train to. "
     "A netdev without a PCI function, or whose last read failed, has no series. Details: "
     "[pcie.md](pcie.md). The GPU topology (`roce_nic_gpu_topology` and the NUMA nodes) is read on "
     "the same thread when the selection changes and every 10 minutes; a failed read leaves none "
     "of its series. Details: [gpus.md](gpus.md)."},
    {"gids", "RoCE GIDs against the addresses",
     "Checked by the `gids` sample stage on the sampler thread every `--gids.interval` (default "
     "`1m`, `0` = off): every IPv4/IPv6 address of a selected netdev with its own RDMA port, and "
     "of its VLANs (one `RTM_GETADDR` dump), against the port's GID table in sysfs; an address "
     "needs a RoCE v2 GID on the netdev it is on. Counts per netdev, never a series per address "
     "(the addresses are in the log and in `check`). Details: [gids.md](gids.md)."},
    {"attribution", "Consumers of each RDMA device",
     "Counted by the attribution poller on its own thread every `--attribution.interval` "
     "(default `0`, off): one restrack QP dump per RDMA device bound to a selected netdev, the "
     "owner of each PID from `/proc/<pid>/cgroup`, pod names from the kubelet's "
     "`/var/log/pods` directories. Counts per owner, never a series per QP or per process; at "
     "most 256 owners per netdev. Needs the host PID namespace. Details: "
     "[attribution.md](attribution.md)."},
};

constexpr EnumName<MetricKind> kKindNames[] = {
    {MetricKind::kCounter, "counter"},
    {MetricKind::kGauge, "gauge"},
    {MetricKind::kUntyped, "untyped"},
};

std::string_view KindName(MetricKind kind) { return NameOf(kKindNames, kind, "untyped"); }

std::string EscapeCell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void AppendArea(std::string& out, std::string_view id, std::string_view title,
                std::string_view intro) {
  out += fmt::format("\n## {}\n\n", title);
  if (!intro.empty()) out += fmt::format("{}\n\n", intro);
  out +=
      fmt::format("Group `{}`: `/metrics?collect[]={}` serves these families alone.\n\n", id, id);
  out += "| Metric | Type | Labels | Help | Source |\n|---|---|---|---|---|\n";
  for (const MetricDef& def : AllMetrics()) {
    if (def.area != id) continue;
    std::string labels;
    for (size_t i = 0; i < def.label_count(); ++i) {
      labels += fmt::format("{}`{}`", i ? ", " : "", def.labels[i]);
    }
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", def.name, KindName(def.kind), labels,
                       EscapeCell(def.help), EscapeCell(def.source));
  }
}

// "`mtu`, `link_speed_min_mbps`, ...": the fields remediation never writes, from the field table.
std::string ObserveOnlyFields() {
  std::string out;
  for (const QosFieldSpec& spec : QosFieldTable())
    if (!spec.Remediable()) out += fmt::format("{}`{}`", out.empty() ? "" : ", ", spec.name);
  return out;
}

}  // namespace

std::string GenerateMetricsDoc() {
  std::string out =
      "# Metrics\n\n"
      "<!-- Generated from exporter/render/metric_table.h; do not edit. Regenerate with:\n"
      "     build/roce_qos_exporter --print-metrics-doc > docs/metrics.md -->\n\n"
      "Every family served on `/metrics` (Prometheus text format 0.0.4). Raw kernel counters are "
      "counters (`_total`) in base units (seconds, bytes); a family appears only while it has "
      "series, and a device that leaves the selection or vanishes takes its series with it.\n\n"
      "Labels: `netdev` network interface, `device` RDMA device, `port` RDMA port (1-based), "
      "`prio` priority 0-7, `tc` traffic class 0-7, `direction` `rx` or `tx`, `window` sliding "
      "window of a derived signal (`15s`, `1m`).\n\n"
      "Counters exist at 0 from the moment their label set is known, so `rate()` and "
      "`increase()` read 0 rather than nothing (an absent series means the device or the exporter "
      "is gone, not that nothing happened): `roce_exporter_collect_errors_total` for every "
      "`reason` of every source that has run; `roce_qos_drift_events_total` for every field the "
      "device's policy checks; `roce_pfc_storms_total` for every priority and direction whose "
      "pause counters exist or whose PFC is on; `roce_qos_remediations_total`, once remediation "
      "is on, for every field the policy checks that remediation can write (not the observe-only " +
      ObserveOnlyFields() +
      "; nothing "
      "the device lacks) with each result of the mode (`success`, `failed`, `mismatch` in "
      "enforce, `dry_run` in dry-run). No other label values are made up in advance.\n\n"
      "Scrape-time selection, as node_exporter's: `GET /metrics?collect[]=<group>` serves only "
      "the families of the named groups (one per section below; repeat the parameter for "
      "several), so one job can scrape the fast signals often and another the slow QoS state "
      "seldom. Without `collect[]` the body is everything; an unknown group is a 400 whose body "
      "names it and the known ones. Prometheus: `params: {'collect[]': [derived, ethtool]}` in the "
      "scrape config.\n";
  for (const Area& area : kAreas) AppendArea(out, area.id, area.title, area.intro);
  // Areas added later (QoS, derived signals) appear even before they get an intro here.
  std::vector<std::string_view> extra;
  for (const MetricDef& def : AllMetrics()) {
    bool known = false;
    for (const Area& area : kAreas) known = known || area.id == def.area;
    for (std::string_view e : extra) known = known || e == def.area;
    if (!known) extra.push_back(def.area);
  }
  for (std::string_view id : extra) AppendArea(out, id, id, "");
  return out;
}

}  // namespace roceqos
