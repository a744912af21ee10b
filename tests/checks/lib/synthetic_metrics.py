#!/usr/bin/env python3
"""Writes 30 minutes of synthetic roce_qos_exporter series as OpenMetrics with timestamps, for
`promtool tsdb create-blocks-from openmetrics`. It exists only to self-test the dashboard query
harness (tests/checks/monitoring/dashboards.sh --prometheus) against a real Prometheus before the testbed
can provide real exporter data; label sets follow the catalogue in docs/metrics.md.

Scenario: two nodes, two netdevs each (and cpu-node-01: one netdev without an RDMA port) (mlx5_0/mlx5_1 port 1), traffic throughout; a PFC storm on
gpu-node-01 ens1f0np0 prio 3 rx from minute 10 to 16; gpu-node-02 ens1f1np1 drifts (pfc) from
minute 20, with remediation attempts, and then disagrees with its switch port on PFC. LLDP: every
ens1f0np0 is cabled to leaf01, every ens1f1np1 to leaf02 (port Ethernet1/<node number>);
cpu-node-01 has no lldpd. Usage: synthetic_metrics.py END_UNIX_SECONDS > out.om
"""
import sys

END = int(sys.argv[1])
STEP = 15
POINTS = 30 * 60 // STEP
START = END - (POINTS - 1) * STEP
NODES = ["gpu-node-01", "gpu-node-02"]
PORTS = [("ens1f0np0", "mlx5_0", "0000:3b:00.0"), ("ens1f1np1", "mlx5_1", "0000:3b:00.1")]
families = {}


def add(family, kind, sample, labels, fn):
    fam = families.setdefault(family, {"kind": kind, "series": []})
    base = {"job": "roce-qos-exporter"}
    base.update(labels)
    fam["series"].append((sample, base, fn))


def storm(node, netdev, prio, direction, t):
    return (node, netdev, prio, direction) == ("gpu-node-01", "ens1f0np0", 3, "rx") and 10 * 60 <= t < 16 * 60


def drifted(node, netdev, t):
    return (node, netdev) == ("gpu-node-02", "ens1f1np1") and t >= 20 * 60


for node in NODES:
    inst = {"instance": node}
    add("up", "gauge", "up", inst, lambda t: 1)
    add("roce_exporter_build", "info", "roce_exporter_build_info", {**inst, "version": "0.1.0", "revision": "abc123"}, lambda t: 1)
    add("roce_exporter_sample_period_seconds", "gauge", "roce_exporter_sample_period_seconds", inst, lambda t: 0.25)
    for source in ("ethtool", "dcb", "rdma"):
        add("roce_exporter_collect_duration_seconds", "gauge", "roce_exporter_collect_duration_seconds", {**inst, "source": source}, lambda t: 0.002)
    add("roce_exporter_collect_errors", "counter", "roce_exporter_collect_errors_total", {**inst, "source": "rdma", "reason": "busy"}, lambda t: t // 600)
    # Optics readable on gpu-node-01; gpu-node-02's module EEPROM reads are refused (no CAP_NET_ADMIN).
    add("roce_exporter_transceiver_permission_denied", "gauge", "roce_exporter_transceiver_permission_denied", inst,
        lambda t, n=node: 1 if n == "gpu-node-02" else 0)
    for netdev, dev, pci in PORTS:
        nd = {**inst, "netdev": netdev}
        add("roce_netdev", "info", "roce_netdev_info", {**nd, "driver": "mlx5_core", "pci": pci, "role": "pf", "state": "up", "master": ""}, lambda t: 1)
        rd = {**inst, "device": dev, "port": "1"}
        add("roce_device", "info", "roce_device_info", {**rd, "netdev": netdev, "pci": pci, "role": "pf", "state": "up"}, lambda t: 1)
        add("roce_qos_in_sync", "gauge", "roce_qos_in_sync", nd, lambda t, n=node, d=netdev: 0 if drifted(n, d, t) else 1)
        for direction in ("rx", "tx"):
            add("roce_port_discards", "counter", "roce_port_discards_total", {**nd, "direction": direction}, lambda t: t // 120)
        add("roce_port_rx_out_of_buffer_packets", "counter", "roce_port_rx_out_of_buffer_packets_total", nd, lambda t: t // 300)
        for window in ("15s", "1m"):
            for role in ("rp", "np"):
                add("roce_pfc_pauses_per_ecn_event", "gauge", "roce_pfc_pauses_per_ecn_event", {**nd, "window": window, "role": role}, lambda t, n=node, d=netdev: 40.0 if storm(n, d, 3, "rx", t) else 0.5)
        add("roce_qos_trust", "gauge", "roce_qos_trust", {**nd, "mode": "dscp"}, lambda t: 1)
        add("roce_qos_trust", "gauge", "roce_qos_trust", {**nd, "mode": "pcp"}, lambda t: 0)
        for field in ("trust", "pfc", "dscp_prio", "roce_tos", "dcqcn_np", "dcqcn_rp", "tcp_ecn"):
            bad = lambda t, n=node, d=netdev, f=field: f == "pfc" and drifted(n, d, t)
            add("roce_qos_drift", "gauge", "roce_qos_drift", {**nd, "field": field}, lambda t, b=bad: 1 if b(t) else 0)
            add("roce_qos_drift_events", "counter", "roce_qos_drift_events_total", {**nd, "field": field}, lambda t, b=bad: 1 if b(t) else 0)
            add("roce_qos_remediations", "counter", "roce_qos_remediations_total", {**nd, "field": field, "result": "success"},
                lambda t, b=bad: (t - 20 * 60) // 120 if b(t) else 0)
        for prio in range(8):
            p = {**nd, "prio": str(prio)}
            add("roce_qos_pfc_enabled", "gauge", "roce_qos_pfc_enabled", p, lambda t, pr=prio, n=node, d=netdev: 1 if pr == 3 and not drifted(n, d, t) else 0)
            add("roce_qos_prio_tc", "gauge", "roce_qos_prio_tc", p, lambda t, pr=prio: pr)
            add("roce_prio_discards", "counter", "roce_prio_discards_total", p, lambda t, pr=prio: t // 60 if pr == 3 else 0)
            for direction in ("rx", "tx"):
                s = lambda t, n=node, d=netdev, pr=prio, di=direction: storm(n, d, pr, di, t)
                pd = {**p, "direction": direction}
                add("roce_pfc_pause_frames", "counter", "roce_pfc_pause_frames_total", pd, lambda t, pr=prio, s=s: t * (3 if pr == 3 else 0) + (5000 * t if s(t) else 0))
                add("roce_pfc_pause_duration_seconds", "counter", "roce_pfc_pause_duration_seconds_total", pd, lambda t, pr=prio: t * (0.01 if pr == 3 else 0))
                for window in ("15s", "1m"):
                    add("roce_pfc_paused_ratio", "gauge", "roce_pfc_paused_ratio", {**pd, "window": window}, lambda t, pr=prio, s=s: 0.95 if s(t) else (0.02 if pr == 3 else 0))
                add("roce_pfc_storm", "gauge", "roce_pfc_storm", pd, lambda t, s=s: 1 if s(t) else 0)
                add("roce_pfc_storms", "counter", "roce_pfc_storms_total", pd, lambda t, s=s: 1 if t >= 10 * 60 and s(10 * 60) else 0)
        for tc in range(8):
            add("roce_tc_ecn_marked_packets", "counter", "roce_tc_ecn_marked_packets_total", {**nd, "tc": str(tc)}, lambda t, c=tc: t * (50 if c == 3 else 0))
            for reason in ("buffer", "congestion"):
                add("roce_tc_discards", "counter", "roce_tc_discards_total", {**nd, "tc": str(tc), "reason": reason}, lambda t: 0)
        for fam, rate in (("roce_cnp_sent", 40), ("roce_cnp_handled", 35), ("roce_cnp_ignored", 1), ("roce_ecn_marked_packets", 45)):
            add(fam, "counter", fam + "_total", rd, lambda t, r=rate: r * t)
        # The LLDP neighbour (leaf01 for ens1f0np0, leaf02 for ens1f1np1) and the host<->switch verdicts.
        leaf = 1 if netdev == "ens1f0np0" else 2
        add("roce_lldp_neighbor_present", "gauge", "roce_lldp_neighbor_present", nd, lambda t: 1)
        add("roce_lldp_neighbor", "info", "roce_lldp_neighbor_info",
            {**nd, "chassis_id": f"0c:42:a1:00:00:0{leaf}", "system_name": f"leaf0{leaf}", "port_id": f"Ethernet1/{node[-1]}",
             "port_description": node, "management_address": f"10.0.0.1{leaf}"}, lambda t: 1)
        add("roce_lldp_switch_max_frame_size_bytes", "gauge", "roce_lldp_switch_max_frame_size_bytes", nd, lambda t: 9216)
        for field in ("pfc", "dscp_prio", "mtu"):
            add("roce_qos_switch_mismatch", "gauge", "roce_qos_switch_mismatch", {**nd, "field": field},
                lambda t, n=node, d=netdev, f=field: 1 if f == "pfc" and drifted(n, d, t) else 0)
        # The transceiver (QSFP28, 4 lanes) and the link's carrier changes; one flap a minute from
        # minute 10 on gpu-node-01 ens1f0np0, whose lane 2 Rx power falls to the low warning.
        flap = lambda t, n=node, d=netdev: (n, d) == ("gpu-node-01", "ens1f0np0") and t >= 10 * 60
        add("roce_netdev_carrier_changes", "counter", "roce_netdev_carrier_changes_total", nd,
            lambda t, f=flap: 1 + (2 * ((t - 600) // 60) if f(t) else 0))
        # The PCIe link (Gen4 x16; ens1f1np1 of gpu-node-01 trained at x8) and its AER totals: the
        # function's three classes, the upstream port's uncorrectable ones (docs/pcie.md).
        for bound in ("current", "max"):
            add("roce_pcie_link_speed_gts", "gauge", "roce_pcie_link_speed_gts", {**nd, "bound": bound}, lambda t: 16)
            add("roce_pcie_link_width", "gauge", "roce_pcie_link_width", {**nd, "bound": bound},
                lambda t, b=bound, n=node, d=netdev: 8 if b == "current" and (n, d) == ("gpu-node-01", "ens1f1np1") else 16)
        for side, classes in (("function", ("correctable", "nonfatal", "fatal")), ("upstream", ("nonfatal", "fatal"))):
            for cls in classes:
                add("roce_pcie_aer_errors", "counter", "roce_pcie_aer_errors_total", {**nd, "side": side, "class": cls},
                    lambda t, f=flap, c=cls: (t - 600) // 60 if f(t) and c == "correctable" else 0)
        # The link: RS-FEC correcting steadily, uncorrectable blocks and one device link-down event a
        # minute on the flapping port; one RoCE v2 GID per address (IPv4 and IPv6), none missing.
        add("roce_link_fec", "info", "roce_link_fec_info", {**nd, "mode": "rs"}, lambda t: 1)
        add("roce_link_fec_corrected_blocks", "counter", "roce_link_fec_corrected_blocks_total", nd, lambda t: 120 * t)
        add("roce_link_fec_uncorrectable_blocks", "counter", "roce_link_fec_uncorrectable_blocks_total", nd,
            lambda t, f=flap: 3 * ((t - 600) // 60) if f(t) else 0)
        for fam in ("roce_link_symbol_errors", "roce_link_fcs_errors", "roce_link_down_events"):
            add(fam, "counter", fam + "_total", {**nd, "source": "netlink"}, lambda t, f=flap: (t - 600) // 60 if f(t) else 0)
        add("roce_rdma_gids", "gauge", "roce_rdma_gids", rd, lambda t: 2)
        # Who is on the NIC (docs/attribution.md): a pod per port, ib_core's GSI QP; one GPU per
        # port on its PCIe switch, the other port's GPU across the host bridge (docs/gpus.md).
        i = PORTS.index((netdev, dev, pci))
        uid = f"6f1c2a4e-0d5b-4c1e-9a57-3b8f0e2d7c{NODES.index(node)}{i}"
        add("roce_workload_qps", "gauge", "roce_workload_qps",
            {**nd, "rdma_device": dev, "kind": "pod", "workload": f"ml/trainer-{i}", "pod_namespace": "ml",
             "pod_name": f"trainer-{i}", "pod_uid": uid}, lambda t: 8)
        add("roce_workload_qps", "gauge", "roce_workload_qps",
            {**nd, "rdma_device": dev, "kind": "kernel", "workload": "ib_core", "pod_namespace": "",
             "pod_name": "", "pod_uid": ""}, lambda t: 1)
        add("roce_workload_gpu", "info", "roce_workload_gpu_info",
            {**inst, "pod_namespace": "ml", "pod_name": f"trainer-{i}", "pod_uid": uid,
             "resource": "nvidia.com/gpu", "device_id": f"GPU-0000000{i}"}, lambda t: 1)
        add("roce_workload_vf", "info", "roce_workload_vf_info",
            {**nd, "pod_namespace": "ml", "pod_name": f"infer-{i}", "pod_uid": "",
             "resource": "intel.com/sriov_rdma", "vf_pci_address": f"0000:{0x3b + i:02x}:00.2"}, lambda t: 1)
        for g in range(len(PORTS)):
            add("roce_nic_gpu_topology", "gauge", "roce_nic_gpu_topology",
                {**nd, "gpu_pci_bus_id": f"00000000:{0x1b + g:02X}:00.0", "relation": "PIX" if g == i else "SYS"},
                lambda t: 1)
        for family in ("ipv4", "ipv6"):
            add("roce_roce_v2_gid_checked_addresses", "gauge", "roce_roce_v2_gid_checked_addresses", {**nd, "family": family}, lambda t: 1)
        add("roce_transceiver", "info", "roce_transceiver_info", {**nd, "type": "QSFP28", "spec": "sff8636", "vendor": "SIMNIC", "part_number": "SIM-QSFP28-SR4", "revision": "A1", "firmware": "", "serial": ""}, lambda t: 1)
        add("roce_transceiver_temperature_celsius", "gauge", "roce_transceiver_temperature_celsius", nd, lambda t: 41.5)
        add("roce_transceiver_supply_voltage_volts", "gauge", "roce_transceiver_supply_voltage_volts", nd, lambda t: 3.31)
        for lane in range(1, 5):
            ln = {**nd, "lane": str(lane)}
            low = lambda t, f=flap, l=lane: f(t) and l == 2
            add("roce_transceiver_rx_power_watts", "gauge", "roce_transceiver_rx_power_watts", ln, lambda t, lo=low: 0.00009 if lo(t) else 0.00081)
            add("roce_transceiver_tx_power_watts", "gauge", "roce_transceiver_tx_power_watts", ln, lambda t: 0.00065)
            add("roce_transceiver_tx_bias_amperes", "gauge", "roce_transceiver_tx_bias_amperes", ln, lambda t: 0.007)
            for kind in ("high_alarm", "low_alarm", "high_warning", "low_warning"):
                add("roce_transceiver_flag", "gauge", "roce_transceiver_flag", {**ln, "monitor": "rx_power", "kind": kind},
                    lambda t, lo=low, k=kind: 1 if lo(t) and k == "low_warning" else 0)
        for kind in ("high_alarm", "low_alarm", "high_warning", "low_warning"):
            add("roce_transceiver_flag", "gauge", "roce_transceiver_flag", {**nd, "monitor": "temperature", "lane": "", "kind": kind}, lambda t: 0)
        for monitor, values in (("temperature", (75, -5, 70, 0)), ("rx_power", (0.0022, 0.00004, 0.0011, 0.0001))):
            for kind, v in zip(("high_alarm", "low_alarm", "high_warning", "low_warning"), values):
                add("roce_transceiver_threshold", "gauge", "roce_transceiver_threshold", {**nd, "monitor": monitor, "kind": kind}, lambda t, v=v: v)

# A node whose only selected netdev has no RDMA port (no roce_device_info, no RDMA counters).
inst = {"instance": "cpu-node-01"}
add("up", "gauge", "up", inst, lambda t: 1)
add("roce_exporter_build", "info", "roce_exporter_build_info", {**inst, "version": "0.1.0", "revision": "abc123"}, lambda t: 1)
add("roce_netdev", "info", "roce_netdev_info", {**inst, "netdev": "eth0", "driver": "veth", "pci": "", "role": "other", "state": "up", "master": ""}, lambda t: 1)
add("roce_lldp_neighbor_present", "gauge", "roce_lldp_neighbor_present", {**inst, "netdev": "eth0"}, lambda t: 0)
add("roce_lldp_neighbor_absent_reason", "gauge", "roce_lldp_neighbor_absent_reason", {**inst, "netdev": "eth0", "reason": "lldpd_not_running"}, lambda t: 1)

out = sys.stdout
for family, fam in families.items():
    out.write(f"# TYPE {family} {fam['kind']}\n")
    for sample, labels, fn in fam["series"]:
        lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
        for i in range(POINTS):
            t = i * STEP
            out.write(f"{sample}{{{lab}}} {fn(t)} {START + t}\n")
out.write("# EOF\n")
