#!/usr/bin/env bash
# Host script (tests/testbed/run npd-plugin --host-script bench/testbed_fleet_series.sh): the
# figures of docs/fleet.md. In the guest, bench/testbed_8nic_run.sh's setup (8 simulated ConnectX
# ports with traffic, PFC on 3, the exporter at the default flags); on the host:
#  - one scrape: series (sample lines), bytes, and the bytes of the exporter's own gzip answer
#    (Accept-Encoding: gzip, as Prometheus asks); series per simulated port (netdev and its RDMA
#    device) and per node;
#  - Debian's Prometheus scraping the exporter twice, as job roce-full (no relabeling) and
#    roce-lean (deploy/prometheus/lean-metric-relabel.yaml), with the recording rules loaded:
#    scrape_samples_post_metric_relabeling of each, and every recording rule yields a result on
#    the lean job.
# NIC8_WORKLOADS=1: the node also runs a training pod on every port and 8 GPUs (testbed_8nic_run.sh)
# with attribution on; prints the series of the attribution and GPU families (docs/fleet.md "What
# naming the job costs") and checks the workload recording rules too.
# Prints MEASURE lines; exits 1 if the lean profile cuts nothing, a rule is empty, or a step fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${TESTBED_RUN_DIR:-$(mktemp -d)}/fleet
mkdir -p "$out"
: "${TESTBED_EXPORTER_URL:?run me with tests/testbed/run --host-script}"
prom_pid=""
trap '[[ -n "$prom_pid" ]] && kill "$prom_pid" 2>/dev/null; true' EXIT

# 1. The 8-port guest.
workloads=${NIC8_WORKLOADS:-0}
{ echo NIC8_SETUP_ONLY=1 "NIC8_WORKLOADS=$workloads"; cat "$root/bench/testbed_8nic_run.sh"; } | "$TESTBED_GUEST_EXEC" >"$out/setup.log" 2>&1 ||
  { cat "$out/setup.log" >&2; exit 1; }
grep SETUP "$out/setup.log"

# 2. One scrape, once the pollers' first rounds are in it (the transceiver, link and PCIe families
# come from their own threads, a round after the start).
deadline=$((SECONDS + 60))
until curl -sf --max-time 10 "$TESTBED_EXPORTER_URL/metrics" >"$out/metrics.txt" &&
  grep -q '^roce_transceiver_info{' "$out/metrics.txt" && grep -q '^roce_link_fec_info{' "$out/metrics.txt" &&
  grep -q '^roce_pcie_link_width{' "$out/metrics.txt" &&
  { [[ $workloads != 1 ]] || { grep -q '^roce_workload_qps{.*kind="pod"' "$out/metrics.txt" &&
    grep -q '^roce_workload_gpu_info{' "$out/metrics.txt" && grep -q '^roce_nic_gpu_topology{' "$out/metrics.txt"; }; }; do
  ((SECONDS < deadline)) || { echo "no transceiver, link or PCIe series after 60 s" >&2; exit 1; }
  sleep 1
done
bytes=$(wc -c <"$out/metrics.txt")
curl -sf --max-time 10 -H 'Accept-Encoding: gzip' -D "$out/gzip.headers" \
  "$TESTBED_EXPORTER_URL/metrics" >"$out/metrics.txt.gz"
grep -qi '^content-encoding: gzip' "$out/gzip.headers" || { echo "no gzip answer" >&2; exit 1; }
gz=$(wc -c <"$out/metrics.txt.gz")
python3 - "$out/metrics.txt" <<'EOF' | tee "$out/series.txt"
import collections, re, sys
lines = [l for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
label = re.compile(r'(\w+)="([^"]*)"')
ib_of = {}
for l in lines:
    if l.startswith("roce_device_info{"):
        d = dict(label.findall(l))
        ib_of[d["netdev"]] = d["device"]
per_port = collections.Counter()
per_family = collections.Counter()
other = 0
for l in lines:
    d = dict(label.findall(l.split("}")[0])) if "{" in l else {}
    per_family[re.match(r"[a-zA-Z_:][\w:]*", l).group(0)] += 1
    port = None
    for netdev, ib in ib_of.items():
        if netdev.startswith("sim") and (d.get("netdev") == netdev or d.get("device") == ib):
            port = netdev
    if port:
        per_port[port] += 1
    else:
        other += 1
counts = sorted(per_port.values())
print(f"MEASURE series_total={len(lines)} sim_ports={len(per_port)} "
      f"series_per_port_min={counts[0]} series_per_port_max={counts[-1]} series_not_per_sim_port={other}")
for name, n in per_family.most_common():
    print(f"FAMILY {name} {n}")
naming = ("roce_workload_", "roce_nic_gpu_topology", "roce_nic_numa_node", "roce_gpu_numa_node",
          "roce_exporter_attribution_")
named = [l for l in lines if l.startswith(naming)]
print(f"MEASURE attribution_series={len(named)} attribution_bytes={sum(len(l) for l in named)} "
      + " ".join(f"{p.rstrip('_')}={sum(1 for l in named if l.startswith(p))}" for p in naming))
EOF
echo "MEASURE scrape_bytes=$bytes gzip_bytes=$gz"

# 3. Prometheus, full and lean.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
target=${TESTBED_EXPORTER_URL#http://}
python3 - "$root" "$target" >"$out/prometheus.yml" <<'EOF'
import sys, yaml
root, target = sys.argv[1], sys.argv[2]
lean = yaml.safe_load(open(f"{root}/deploy/prometheus/lean-metric-relabel.yaml"))
job = lambda name: {"job_name": name, "scrape_interval": "5s", "static_configs": [{"targets": [target]}]}
full, slim = job("roce-full"), job("roce-lean")
slim["metric_relabel_configs"] = lean
print(yaml.safe_dump({"global": {"evaluation_interval": "5s"},
                      "rule_files": [f"{root}/alerts/roce_qos.recording.yaml"],
                      "scrape_configs": [full, slim]}))
EOF
promtool check config "$out/prometheus.yml" >/dev/null
prometheus --config.file="$out/prometheus.yml" --storage.tsdb.path="$out/tsdb" \
  --web.listen-address="127.0.0.1:$port" >"$out/prometheus.log" 2>&1 &
prom_pid=$!
query() { curl -sf --max-time 5 "http://127.0.0.1:$port/api/v1/query" --data-urlencode "query=$1" |
  python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(" ".join(x["value"][1] for x in r) if r else "")'; }
deadline=$((SECONDS + 90))
# The LLDP roll-ups (switch:*, switch_port:*, netdev:roce_lldp_neighbor:info) need a neighbour,
# and this node runs no lldpd (tests/e2e has a switch): left out; so are the workload rules
# (netdev:roce_workload*) unless NIC8_WORKLOADS=1 turns attribution on.
skip="'switch', 'netdev:roce_lldp_'"
[[ $workloads == 1 ]] || skip+=", 'netdev:roce_workload'"
rules=$(python3 -c "import yaml; print(' '.join(r['record'] for g in yaml.safe_load(open('$root/alerts/roce_qos.recording.yaml'))['groups'] for r in g['rules'] if not r['record'].startswith(($skip))))")
# lean_of RULE: the selector of its lean-job results; the workload rules aggregate the job away
# (one series per instance and netdev whichever jobs scrape it): all of their results.
lean_of() { [[ $1 == netdev:roce_workload* ]] || echo '{job="roce-lean"}'; }
# Ready when both jobs were scraped and every recording rule has a lean result (rates need two
# scrapes, then one evaluation).
until
  full_n=$(query 'scrape_samples_scraped{job="roce-full"}' 2>/dev/null || true)
  lean_n=$(query 'scrape_samples_post_metric_relabeling{job="roce-lean"}' 2>/dev/null || true)
  empty=""
  for r in $rules; do [[ -n "$(query "count($r$(lean_of "$r"))" 2>/dev/null || true)" ]] || empty+=" $r"; done
  [[ -n "$full_n" && -n "$lean_n" && -z "$empty" ]]
do
  ((SECONDS < deadline)) || { echo "no complete data after 90 s: full='$full_n' lean='$lean_n' empty rules:$empty" >&2; tail -5 "$out/prometheus.log" >&2; exit 1; }
  sleep 1
done
echo "MEASURE prometheus_full_series=$full_n prometheus_lean_series=$lean_n"
query 'count by (__name__) ({job="roce-lean"})' >/dev/null
for r in $rules; do echo "RULE $r lean_results=$(query "count($r$(lean_of "$r"))")"; done
((lean_n < full_n)) || { echo "the lean profile cut nothing ($lean_n >= $full_n)" >&2; exit 1; }
