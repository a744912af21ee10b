#!/usr/bin/env bash
# Every Grafana dashboard query against a real Prometheus that scraped the real exporter in the
# testbed VM during traffic, a PFC storm, QoS drift and its remediation. A host script of the
# testbed runner; tests/e2e/run runs it after alerting.sh in the same VM boot:
#
#   tests/testbed/run --forward 9881 --script tests/e2e/guest/preflight.sh --host-script tests/e2e/dashboards-testbed.sh
#   (the --script keeps the runner from running every testbed scenario first; --forward 9881
#   reaches the second exporter, below)
#
# Scenario (simulated ConnectX port, guest side through $TESTBED_GUEST_EXEC):
#   0. whatever ran before is undone: a leftover exporter is stopped, storms stopped and every
#      simnic rate zeroed, the port configured to the embedded default policy;
#   1. lldpd runs on the port and a leaf switch's LLDPDU arrives through simnic (the by-switch
#      dashboard's neighbour); the exporter starts with --remediation=enforce; RoCE traffic with ECN marks and CNPs on
#      priority 3; Prometheus (1 s scrapes) sees it up and in sync. A second exporter (guest port
#      9881) watches only veth1, a netdev without an RDMA port: a second "node" without RDMA;
#   2. drift: `dcb pfc set ... all:off 4:on`; enforce puts PFC back on priority 3 at once
#      (roce_qos_remediations_total{field="pfc",result="success"}, dcb agrees);
#   3. a PFC storm on priority 3 rx until Prometheus sees roce_pfc_storm == 1;
#   4. drift during the storm: DSCP 26 moved from priority 3 to 5 with `dcb app`; the storm
#      guardrail blocks remediation, so Prometheus sees the drift (roce_qos_drift == 1,
#      remediation state blocked_storm) and keeps seeing it;
#   5. in that state (storm and drift current, a remediation behind), tests/checks/monitoring/dashboards.sh
#      --prometheus runs every panel, annotation and variable query over the scenario's time
#      range the way Grafana would (1 s scrape interval): each must succeed and return data, and
#      the panels this scenario drives must show it (a value > 0); Prometheus evaluates the
#      shipped recording rules, which the global view dashboard reads;
#      then, picking each node in turn (--set node=...), every template variable must have values
#      on the node with RDMA and on the one without;
#   6. the storm stops: enforce restores DSCP 26 -> 3 and the device is in sync again.
# Results (appended to $E2E_RESULTS when set): queries with data, total, duration.
set -euo pipefail
: "${TESTBED_EXPORTER_ADDR:?run through: tests/testbed/run --host-script $0}"
: "${TESTBED_GUEST_EXEC:?run through tests/testbed/run --host-script}"
: "${TESTBED_PORT_9881:?run through tests/testbed/run --forward 9881 (the exporter without RDMA)}"
nordma_addr=127.0.0.1:$TESTBED_PORT_9881
# The exporter without RDMA: guest lib variables for a second instance (own pid file, port, log).
nordma="EXPORTER_PIDFILE=/run/dashboards-nordma.pid EXPORTER_PORT=9881 EXPORTER_URL=http://127.0.0.1:9881 EXPORTER_LOG=/run/dashboards-nordma.log"
root=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
work=${TESTBED_RUN_DIR:-$(mktemp -d)}/dashboards-e2e
mkdir -p "$work"
results=${E2E_RESULTS:-$work/results.txt}
t0=$SECONDS
guest() { "$TESTBED_GUEST_EXEC" "$@"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
scrape_s=1

# wait_until SECS PROMQL: polls Prometheus until PROMQL returns a non-empty vector.
wait_until() {
  local deadline=$((SECONDS + $1)) n
  while ((SECONDS < deadline)); do
    n=$(curl -sG "$prom/api/v1/query" --data-urlencode "query=$2" | jq '.data.result | length' 2>/dev/null || echo 0)
    ((n > 0)) && return 0
    sleep 0.5
  done
  echo "FAIL: timed out after $1 s waiting for: $2" >&2
  guest 'tail -n 25 /run/dashboards-exporter.log' >&2 || true
  return 1
}

# ---- 0. a clean guest, whatever ran before in this VM ------------------------------------------
sim=$(guest 'require exporter simnic; simnic_netdevs | head -n1')
[[ -n "$sim" ]] || { echo "no simulated netdev in the guest" >&2; exit 1; }
# The second port carries a pod's QP (Soft-RoCE over it: who is on this NIC) and storms with the
# first (the jobs a storm touched). Not on the first: enforce refuses to write to a netdev whose RDMA
# devices are not its PCI function's (the write gate's identity check), and Soft-RoCE over a
# ConnectX netdev is such a device.
sim2=$(guest 'simnic_netdevs | sed -n 2p')
[[ -n "$sim2" ]] || { echo "no second simulated netdev in the guest" >&2; exit 1; }
guest "p=\$(cat \$EXPORTER_PIDFILE 2>/dev/null)
if [ -n \"\$p\" ] && kill -0 \"\$p\" 2>/dev/null; then stop_exporter; fi
rm -f \$EXPORTER_PIDFILE
$nordma; p=\$(cat \$EXPORTER_PIDFILE 2>/dev/null)
if [ -n \"\$p\" ] && kill -0 \"\$p\" 2>/dev/null; then stop_exporter; fi
rm -f \$EXPORTER_PIDFILE
simnic_ctl $sim 'storm stop all; rate * 0'
# Soft-RoCE devices a previous script left on the simnic ports (rxe0 on veth0 is the baseline's).
for r in \$(rdma link show | awk '\$2 ~ /^rx/ && \$2 !~ /^rxe0\\// { sub(/\\/.*/, \"\", \$2); print \$2 }'); do rdma link del \$r; done
simnic_ctl $sim2 'storm stop all; rate * 0'
rdev2=\$(rdma_links | awk -v n=$sim2 '\$2 == n { split(\$1, a, \"/\"); print a[1] }')
simnic_conform_default_policy $sim2 \$rdev2
dcb pfc set dev $sim prio-pfc all:off 3:on
dcb app add dev $sim dscp-prio 24:3 26:3 48:6
simnic_ctl $sim 'ecn np all 0; ecn rp all 0; ecn np 3 1; ecn rp 3 1'
rdev=\$(rdma_links | awk -v n=$sim '\$2 == n { split(\$1, a, \"/\"); print a[1] }')
[ -n \"\$rdev\" ] || fail 'no RDMA device bound to $sim'
echo 106 > /sys/class/infiniband/\$rdev/tc/1/traffic_class
sysctl -qw net.ipv4.tcp_ecn=1
simnic_ctl $sim 'traffic 3 rx 200000; traffic 3 tx 200000; rate rx_prio3_pause 50; rate rx_prio3_pause_duration 2000'
simnic_ctl $sim 'rate rx_prio3_marked 2000; rate np_ecn_marked_roce_packets 2000; rate np_cnp_sent 500; rate rp_cnp_handled 400; rate rp_cnp_ignored 10'" \
  >"$work/guest-setup.log" 2>&1 || { cat "$work/guest-setup.log" >&2; echo "guest setup failed" >&2; exit 1; }

# ---- 1. exporter (enforce) and Prometheus ------------------------------------------------------
guest "EXPORTER_LOG=/run/dashboards-exporter.log
\"\$EXPORTER\" policy show-default >/run/dashboards-policy.yaml || fail 'policy show-default failed'
start_lldpd -r $sim
# A pod holding QPs on the port (Soft-RoCE over it, docs/attribution.md): who is on this NIC, and
# the job the storm below touches.
workload_rxe $sim2 192.168.82.1 rxa
workload_qps \$(workload_pod_cgroup ml trainer-0 6f1c2a4e-0d5b-4c1e-9a57-3b8f0e2d7c11) rxa 7001 pod
start_exporter --sampler.period=250ms --storm.detection-time=200ms --storm.restoration-time=400ms --qos.poll-interval=500ms --remediation=enforce --config=/run/dashboards-policy.yaml --remediation.backoff=1s --collector.device-include='^($sim|$sim2)\$' --lldp.interval=1s --lldp.socket=\$LLDPD_SOCK --attribution.interval=1s --pcie.interval=1s
# The switch port: a leaf that agrees with the NIC (PFC {3}, DSCP 26 -> 3, 9216-byte frames), so
# the by-switch dashboard has a neighbour, and its mismatch panel a series (0).
simnic_rx $sim \$(lldp_frame 0c:42:a1:00:00:01 leaf1 Ethernet1/1 3600 \$(lldp_mfs 9216) \$(lldp_pfc 0 0 8 3) \$(lldp_app 3:5:26))" \
  >"$work/start.log" 2>&1 || { cat "$work/start.log" >&2; echo "exporter did not start" >&2; exit 1; }
guest "$nordma; rdma link show | grep -q ' netdev veth1 ' && fail 'veth1 has an RDMA port'
start_exporter --web.listen-address=:9881 --sampler.period=250ms --collector.device-include=veth1" \
  >"$work/start-nordma.log" 2>&1 || { cat "$work/start-nordma.log" >&2; echo "exporter (veth1) did not start" >&2; exit 1; }

port=$(free_port)
prom=http://127.0.0.1:$port
# The shipped roll-ups, evaluated every scrape instead of every 15 s: the scenario's storm and
# drift last seconds, and the global view dashboard reads only these (as a global store would).
sed -E "s/^( +interval: )15s$/\1${scrape_s}s/" "$root/alerts/roce_qos.recording.yaml" >"$work/recording.yaml"
grep -q "interval: 15s" "$work/recording.yaml" && { echo "recording rules: an interval left at 15s" >&2; exit 1; }
grep -q "interval: ${scrape_s}s" "$work/recording.yaml" || { echo "recording rules: no group interval to shorten" >&2; exit 1; }
cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: ${scrape_s}s
  scrape_timeout: 900ms
  evaluation_interval: ${scrape_s}s
rule_files:
  - $work/recording.yaml
scrape_configs:
  - job_name: roce-qos-exporter
    static_configs:
      - targets: ["$TESTBED_EXPORTER_ADDR", "$nordma_addr"]
        labels:
          cluster: testbed  # as a site's relabelling adds it; the dashboards' cluster variable reads it
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$port" >"$work/prometheus.log" 2>&1 &
prom_pid=$!
trap 'kill $prom_pid 2>/dev/null || true; wait $prom_pid 2>/dev/null || true' EXIT
start=$(date +%s)

wait_until 60 "up{job=\"roce-qos-exporter\", instance=\"$TESTBED_EXPORTER_ADDR\"} == 1"
wait_until 60 "roce_netdev_info{instance=\"$nordma_addr\", netdev=\"veth1\"} == 1"
n=$(curl -sG "$prom/api/v1/query" --data-urlencode "query=roce_device_info{instance=\"$nordma_addr\"}" | jq '.data.result | length')
[[ "$n" == 0 ]] || { echo "FAIL: the veth1 exporter has roce_device_info series" >&2; exit 1; }
echo "ok: second exporter: veth1, no RDMA port (no roce_device_info)"
wait_until 30 "roce_qos_in_sync{netdev=\"$sim\"} == 1"
wait_until 30 "roce_qos_remediation_state{netdev=\"$sim\", state=\"in_sync\"} == 1"
echo "ok: exporter (enforce) scraped and in sync"

# ---- 2. drift that enforce fixes at once ---------------------------------------------------------
guest "dcb pfc set dev $sim prio-pfc all:off 4:on"
wait_until 60 "roce_qos_remediations_total{netdev=\"$sim\", field=\"pfc\", result=\"success\"} >= 1"
wait_until 30 "roce_qos_in_sync{netdev=\"$sim\"} == 1"
guest "dcb pfc show dev $sim | grep -q ' 3:on '" ||
  { echo "FAIL: dcb does not show PFC on priority 3 after the remediation" >&2; exit 1; }
echo "ok: PFC drift restored by enforce (dcb agrees)"

# ---- 3. storm -----------------------------------------------------------------------------------
guest "simnic_ctl $sim 'storm start 3 rx'; simnic_ctl $sim2 'storm start 3 rx'"
wait_until 60 "roce_pfc_storm{netdev=\"$sim\", prio=\"3\", direction=\"rx\"} == 1"
echo "ok: storm seen"

# ---- 4. drift the storm guardrail keeps -------------------------------------------------------
# The check below runs in this state, so the instant panels (drifted fields, top paused ratios)
# have something current to show.
guest "dcb app add dev $sim dscp-prio 26:5"
wait_until 60 "roce_qos_drift{netdev=\"$sim\", field=\"dscp_prio\"} == 1"
wait_until 30 "roce_qos_remediation_state{netdev=\"$sim\", state=\"blocked_storm\"} == 1"
# rate() windows of the check are 4 scrapes: let them hold the drifted, stormed state.
wait_until 30 "count_over_time((roce_qos_in_sync{netdev=\"$sim\"} == 0)[5s:1s]) >= 5"
echo "ok: drift seen, remediation blocked by the storm"
guest 'exporter_alive' >/dev/null

# ---- 5. every dashboard query -------------------------------------------------------------------
# Panels and refs the scenario drives: each must show a value above 0 somewhere in the range.
active='^roce-qos-fleet-overview / ('
active+='1 Nodes in sync A|2 Nodes drifted A|3 Active PFC storms A|4 Exporters up A|'
active+='6 Remediations \(range\) A|8 Drifted fields A|9 Top paused-time ratios A|11 CNP activity [AB]|'
active+='12 CNPs sent per node A|15 Remediation activity [AB]|16 PFC storm episodes A)$|'
active+='^roce-qos-node-detail / ('
active+='1 PFC pause frames rx A|3 PFC paused time rx [AB]|5 ECN-marked packets per TC A|'
active+='6 CNPs and RoCE ECN marks [ABCD]|9 PFC storm state A|10 QoS drift by field A|'
active+='11 Observed QoS state per priority [AC]|12 Drift and remediation [AB]|'
active+='13 Exporter sampling on this node [AB])$'
# The range ends now, not when dashboards.sh gets to its queries after its lint: the scenario's
# first seconds (the only ones in sync) stay inside it however long the lint takes.
end=$(date +%s)
lookback=$((end - start + 5))
rc=0
ROCEQOS_DASHBOARDS_NO_SELFTEST=1 bash "$root/tests/checks/monitoring/dashboards.sh" --prometheus "$prom" \
  --end "$end" --lookback "${lookback}s" --step "${scrape_s}s" --scrape-interval "${scrape_s}s" \
  --expect-activity "$active" | tee "$work/dashboards.log" || rc=$?
# One node picked, as a user does: every variable needs values on both nodes.
for inst in "$TESTBED_EXPORTER_ADDR" "$nordma_addr"; do
  ROCEQOS_DASHBOARDS_NO_SELFTEST=1 bash "$root/tests/checks/monitoring/dashboards.sh" --prometheus "$prom" \
    --lookback "${lookback}s" --step "${scrape_s}s" --scrape-interval "${scrape_s}s" \
    --variables-only --set "node=$inst" | tee "$work/dashboards-node-$inst.log" || rc=$?
done

# ---- 6. storm over: enforce restores the policy -------------------------------------------------
guest "simnic_ctl $sim 'storm stop all'; simnic_ctl $sim2 'storm stop all'"
if wait_until 60 "roce_qos_remediations_total{netdev=\"$sim\", field=\"dscp_prio\", result=\"success\"} >= 1" &&
  wait_until 30 "roce_qos_in_sync{netdev=\"$sim\"} == 1" &&
  guest "dcb -N app show dev $sim | tr ' ' '\n' | grep -qx '26:3'"; then
  echo "ok: after the storm, enforce restored DSCP 26 -> 3 (dcb agrees)"
else
  echo "FAIL: DSCP 26 -> 3 not restored after the storm" >&2
  rc=1
fi
guest 'exporter_alive; stop_exporter' >/dev/null || { echo "FAIL: the exporter did not survive or stop cleanly" >&2; rc=1; }
guest "$nordma; exporter_alive; stop_exporter" >/dev/null || { echo "FAIL: the veth1 exporter did not survive or stop cleanly" >&2; rc=1; }
summary=$(sed -n 's/^e2e: \([0-9]*\) of \([0-9]*\) queries.*/\1 \2/p' "$work/dashboards.log")
{
  echo "dashboards_queries_with_data ${summary% *}"
  echo "dashboards_queries_total ${summary#* }"
  echo "dashboards_scenario_seconds $((SECONDS - t0))"
} >>"$results"
exit "$rc"
