#!/usr/bin/env bash
# Every Grafana dashboard query against a real Prometheus that scraped the real exporter in the
# testbed VM during traffic, a PFC storm and QoS drift. A host script of the testbed runner:
#
#   tests/testbed/run --host-script tests/e2e/dashboards-testbed.sh
#
# Scenario (simulated ConnectX port, guest side through $TESTBED_GUEST_EXEC):
#   1. the exporter starts in observe mode; PFC on priority 3 as the default policy wants;
#      RoCE traffic with ECN marks and CNPs on priority 3;
#   2. Prometheus (1 s scrapes) sees the exporter up;
#   3. a PFC storm on priority 3 rx until Prometheus sees roce_pfc_storm == 1, then it stops;
#   4. drift: PFC moved from priority 3 to 4 behind the exporter's back, until Prometheus sees
#      roce_qos_in_sync == 0;
#   5. tests/checks/dashboards.sh --prometheus runs every panel, annotation and variable query over
#      the scenario's time range: each must succeed and return data (remediation panels excepted:
#      observe mode remediates nothing).
set -euo pipefail
: "${TESTBED_EXPORTER_ADDR:?run through: tests/testbed/run --host-script $0}"
: "${TESTBED_GUEST_EXEC:?run through tests/testbed/run --host-script}"
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${TESTBED_RUN_DIR:-$(mktemp -d)}/dashboards-e2e
mkdir -p "$work"
guest() { "$TESTBED_GUEST_EXEC" "$@"; }

# wait_until SECS PROMQL: polls Prometheus until PROMQL returns a non-empty vector.
wait_until() {
  local deadline=$((SECONDS + $1)) n
  while ((SECONDS < deadline)); do
    n=$(curl -sG "$prom/api/v1/query" --data-urlencode "query=$2" | jq '.data.result | length' 2>/dev/null || echo 0)
    ((n > 0)) && return 0
    sleep 0.5
  done
  echo "timed out after $1 s waiting for: $2" >&2
  return 1
}

guest 'require exporter simnic; start_exporter --sampler.period=250ms' >"$work/start.log"
sim=$(guest 'simnic_netdevs | head -n1')
[[ -n "$sim" ]] || { echo "no simulated netdev in the guest" >&2; exit 1; }
guest "dcb pfc set dev $sim prio-pfc all:off 3:on"
guest "simnic_ctl $sim 'traffic 3 rx 200000; traffic 3 tx 200000'"
guest "simnic_ctl $sim 'rate *marked* 2000; rate *cnp* 500'"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prom=http://127.0.0.1:$port
cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: roce-qos-exporter
    static_configs:
      - targets: ["$TESTBED_EXPORTER_ADDR"]
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$port" >"$work/prometheus.log" 2>&1 &
prom_pid=$!
trap 'kill $prom_pid 2>/dev/null || true' EXIT
start=$(date +%s)

wait_until 60 'up{job="roce-qos-exporter"} == 1'
guest "simnic_ctl $sim 'storm start 3 rx'"
wait_until 60 "roce_pfc_storm{netdev=\"$sim\", prio=\"3\", direction=\"rx\"} == 1"
guest "simnic_ctl $sim 'storm stop all'"
guest "dcb pfc set dev $sim prio-pfc all:off 4:on"
wait_until 60 "roce_qos_in_sync{netdev=\"$sim\"} == 0"
# rate() windows are 4 s: wait until Prometheus holds 5 s of samples of the drifted state.
wait_until 60 "count_over_time((roce_qos_in_sync{netdev=\"$sim\"} == 0)[5s:1s]) >= 5"

lookback=$(($(date +%s) - start + 5))
bash "$root/tests/checks/dashboards.sh" --prometheus "$prom" --lookback "${lookback}s" \
  --rate-interval 4s --step 1s --allow-empty 'Remediation activity A$|Drift and remediation B$'
