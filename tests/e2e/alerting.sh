#!/usr/bin/env bash
# End-to-end alerting, run on the host by tests/e2e/run as a testbed --host-script while the VM is
# up: real Prometheus (Debian `prometheus`, loopback) scrapes the exporter in the testbed VM
# through the forwarded port and evaluates alerts/ (rendered with short for: and ranges; the
# production rules are the source), real Alertmanager (`prometheus-alertmanager`, with the inhibit
# rules of alerts/alertmanager-inhibit.yaml merged in) routes every alert to tests/e2e/webhook.py,
# which records what arrives. Scenarios (each with a time bound
# derived from the intervals below, asserted):
#   healthy   device in policy, background traffic with ECN: no alert at all reaches the webhook
#   ecn       pauses on the lossless priority, no ECN mark/CNP: RoceQosEcnSilent fires
#   storm     simnic PFC storm of 5 s: RoceQosPfcStorm fires as a warning (never critical), then
#             resolves after the storm stops; the exporter's own detection latency (storm start ->
#             roce_pfc_storm=1 in the snapshot) is measured in the guest
#   origin    simnic tx storm (the host is where the storm starts): RoceQosPfcStormOrigin reaches
#             the webhook; RoceQosPfcStorm for it fires in Prometheus, Alertmanager holds it
#             inhibited by the origin; after the storm it resolves first, the origin then: the
#             webhook never gets it
#   drift     `dcb pfc set` turns PFC off on priority 3: RoceQosDrift (field pfc) fires
#   workloads a pod on one port, a Slurm job on the other (QPs on Soft-RoCE, docs/attribution.md);
#             a storm on the pod's port: RoceQosPfcStorm carries the pod (labels) and its GPU from
#             the fake kubelet (annotation), nothing names the job
# The healthy baseline's in-sync check and the drift scenario need the QoS engine's metrics; an
# exporter without them skips both with a SKIP line (a failure with E2E_STRICT=1).
# Results: $E2E_RESULTS (default $TESTBED_RUN_DIR/e2e-results.txt), one `key value` line each.
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${TESTBED_EXPORTER_ADDR:?run through tests/e2e/run (tests/testbed/run --host-script)}"
: "${TESTBED_GUEST_EXEC:?run through tests/e2e/run}"
work=${TESTBED_RUN_DIR:-$(mktemp -d)}/e2e
mkdir -p "$work"
results=${E2E_RESULTS:-$work/../e2e-results.txt}
: >"$results"

# ---- intervals: every bound below is computed from these -------------------------------------
scrape_s=1        # Prometheus scrape_interval
eval_s=1          # Prometheus evaluation_interval
group_wait_s=1    # Alertmanager group_wait
group_interval_s=1
sample_s=0.25     # exporter --sampler.period
idle_s=1          # exporter --sampler.idle-period (default): the port is idle until the storm
follow_s=0.1      # the storm detector's follow-up read after a credited onset (docs/signals.md)
detection_s=0.2   # exporter --storm.detection-time
restoration_s=0.4 # exporter --storm.restoration-time (2 x detection)
qos_poll_s=5      # exporter --qos.poll-interval (DCB notifications usually beat it)
max_for=5s        # rendered rules: every for: capped at this
max_for_s=5
storm_range=20s   # rendered rules: RoceQosPfcStorm's increase(...[2m]) becomes [20s]
storm_range_s=20
ecn_window_s=60   # roce_ecn_silent{window="1m"} stays 1 this long after the last pause
# Scheduling noise of a TCG guest behind user-mode networking on a shared 2-core host.
slack_s=${E2E_SLACK:-10}
# Sampler wake-up jitter of the exporter inside the TCG guest, for the in-guest latency bound.
sched_ms=${E2E_SCHED_MS:-100}

pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

source "$root/tests/common.bash"
result() { echo "$1 $2" | tee -a "$results"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.3f\", ($*) }"; }  # parenthesised: a bare > is a redirection
guest() { "$TESTBED_GUEST_EXEC" "$@"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# poll SECS CMD...: runs CMD every 0.2 s until it succeeds or SECS pass.
poll() {
  local deadline
  deadline=$(calc "$(now) + $1")
  shift
  until "$@"; do
    [[ $(calc "$(now) < $deadline") == 1.000 ]] || return 1
    sleep 0.2
  done
}

# ---- webhook receiver, Alertmanager, Prometheus ----------------------------------------------
record=$work/webhook.jsonl
: >"$record"
python3 "$here/webhook.py" 0 "$record" >"$work/webhook.log" 2>&1 &
pids+=($!)
poll 10 test -s "$record.port" || { echo "webhook receiver did not start" >&2; exit 1; }
hook_port=$(cat "$record.port")

am_port=$(free_port)
cat >"$work/alertmanager.yml" <<EOF
route:
  receiver: webhook
  group_by: ['...']   # one notification per alert
  group_wait: ${group_wait_s}s
  group_interval: ${group_interval_s}s
  repeat_interval: 1h
receivers:
  - name: webhook
    webhook_configs:
      - url: http://127.0.0.1:$hook_port/
        send_resolved: true
EOF
# The shipped inhibit rules, merged from alerts/alertmanager-inhibit.yaml as alerts/README.md tells
# users to (read at run time: the file as shipped is what the origin scenario tests).
inhibit_rules=$(python3 - "$work/alertmanager.yml" "$root/alerts/alertmanager-inhibit.yaml" <<'EOF'
import sys, yaml
config_path, shipped_path = sys.argv[1:]
with open(config_path, encoding="utf-8") as f:
    config = yaml.safe_load(f)
with open(shipped_path, encoding="utf-8") as f:
    shipped = yaml.safe_load(f)["inhibit_rules"]
config.setdefault("inhibit_rules", []).extend(shipped)
with open(config_path, "w", encoding="utf-8") as f:
    yaml.safe_dump(config, f, sort_keys=False)
print(len(shipped))
EOF
)
if ! amtool check-config "$work/alertmanager.yml" >"$work/amtool.log" 2>&1 ||
  ! grep -q " $inhibit_rules inhibit rules" "$work/amtool.log"; then
  cat "$work/amtool.log" >&2
  echo "alertmanager.yml with the $inhibit_rules shipped inhibit rules does not load" >&2
  exit 1
fi
prometheus-alertmanager --config.file="$work/alertmanager.yml" --storage.path="$work/am-data" \
  --web.listen-address="127.0.0.1:$am_port" --cluster.listen-address= >"$work/alertmanager.log" 2>&1 &
pids+=($!)

"$root/alerts/alerttool" render --out "$work/rules" --max-for "$max_for" \
  --range "2m=$storm_range" >/dev/null
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: ${scrape_s}s
  scrape_timeout: ${scrape_s}s
  evaluation_interval: ${eval_s}s
rule_files:
  - $work/rules/*.yaml
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:$am_port']
scrape_configs:
  - job_name: roce-qos-exporter
    static_configs:
      - targets: ['$TESTBED_EXPORTER_ADDR']
        labels:
          instance: testbed
EOF
promtool check config "$work/prometheus.yml" >/dev/null
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom-data" \
  --web.listen-address="127.0.0.1:$prom_port" --rules.alert.resend-delay=1s \
  >"$work/prometheus.log" 2>&1 &
pids+=($!)
prom=http://127.0.0.1:$prom_port
poll 30 curl -sf "$prom/-/ready" -o /dev/null || { echo "Prometheus not ready" >&2; exit 1; }
poll 30 curl -sf "http://127.0.0.1:$am_port/-/ready" -o /dev/null ||
  { echo "Alertmanager not ready" >&2; exit 1; }

# query EXPR: the instant vector's values, one per line.
query() {
  curl -sf "$prom/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; [print(r["value"][1]) for r in json.load(sys.stdin)["data"]["result"]]'
}
# received STATUS ALERTNAME SINCE [LABEL=VALUE...]: prints the receive time of the first matching
# notification received after SINCE; status 1 if none.
received() {
  python3 - "$record" "$@" <<'EOF'
import json, sys
path, status, name, since, *pairs = sys.argv[1:]
want = dict(p.split("=", 1) for p in pairs)
with open(path, encoding="utf-8") as f:
    for line in f:
        a = json.loads(line)
        if a["status"] == status and a["alertname"] == name and a["received"] > float(since) \
                and all(a["labels"].get(k) == v for k, v in want.items()):
            print(f'{a["received"]:.3f}')
            sys.exit(0)
sys.exit(1)
EOF
}
notifications_since() {
  python3 - "$record" "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    a = json.loads(line)
    if a["received"] > float(sys.argv[2]):
        print(a["status"], a["alertname"], json.dumps(a["labels"], sort_keys=True))
EOF
}
# expect_alert STATUS ALERTNAME SINCE BOUND [LABEL=VALUE...]: asserts the notification arrives
# within BOUND seconds of SINCE; records the delay.
expect_alert() {
  local status=$1 name=$2 since=$3 bound=$4 at
  shift 4
  if poll "$bound" received "$status" "$name" "$since" "$@" >/dev/null; then
    at=$(received "$status" "$name" "$since" "$@")
    result "e2e_${name}_${status}_seconds" "$(calc "$at - $since")"
    pass "$name $status reached the webhook after $(calc "$at - $since") s (bound $bound s)"
  else
    fail "$name $status did not reach the webhook within $bound s; got: $(notifications_since "$since" | head -5)"
  fi
}
no_alerts_active() { [[ -z $(query 'ALERTS{alertstate=~"pending|firing"}') ]]; }

# ---- the exporter in the guest ---------------------------------------------------------------
exporter_log=/run/e2e-exporter.log
sim=$(guest 'require exporter simnic; simnic_netdevs | head -n1')
[[ -n $sim ]] || { echo "no simnic netdev in the guest" >&2; exit 1; }
# ---- healthy baseline, configured before the exporter starts (so no drift exists at any time) --
# The embedded default policy: trust dscp (DSCP APP entries), PFC on priority 3, DSCP 26/24 -> 3,
# 48 -> 6, DCQCN NP/RP on priority 3 only, RoCE ToS 106, tcp_ecn 1; RoCE traffic both ways with
# ECN marks and CNPs.
guest "dcb pfc set dev $sim prio-pfc all:off 3:on
dcb app add dev $sim dscp-prio 24:3 26:3 48:6
simnic_ctl $sim 'ecn np all 0; ecn rp all 0; ecn np 3 1; ecn rp 3 1'
rdev=\$(rdma_links | awk -v n=$sim '\$2 == n { split(\$1, a, \"/\"); print a[1] }')
[ -n \"\$rdev\" ] || fail 'no RDMA device bound to $sim'
echo 106 > /sys/class/infiniband/\$rdev/tc/1/traffic_class  # MOFED-style RoCE ToS: DSCP 26 + ECT(0)
sysctl -qw net.ipv4.tcp_ecn=1
simnic_ctl $sim 'traffic 3 rx 20000; traffic 3 tx 20000; rate rx_prio3_pause 50; rate tx_prio3_pause 50; rate rx_prio3_pause_duration 2000; rate tx_prio3_pause_duration 2000; rate np_ecn_marked_roce_packets 400; rate np_cnp_sent 300; rate rp_cnp_handled 300'" ||
  fail "could not configure the healthy baseline in the guest"
# One monitored NIC, the one the scenarios drive: the healthy run means "this node is healthy",
# and veth0 (bound to rxe0, selected by default) has no DCB at all.
guest "EXPORTER_LOG=$exporter_log
start_exporter --sampler.period=250ms --storm.detection-time=200ms --storm.restoration-time=400ms --collector.device-include=$sim" ||
  { echo "exporter did not start in the guest" >&2; exit 1; }
poll 30 bash -c "[[ \$(curl -sf '$prom/api/v1/query' --data-urlencode 'query=up{job=\"roce-qos-exporter\"}' | grep -o '\"1\"]') ]]" ||
  { echo "Prometheus does not scrape the exporter at $TESTBED_EXPORTER_ADDR" >&2; exit 1; }
pass "Prometheus scrapes the exporter in the guest ($TESTBED_EXPORTER_ADDR, netdev $sim)"
# Prometheus asks for gzip (Accept-Encoding: gzip): its scrapes are the gzip bytes the exporter
# counts (nothing else here sends Accept-Encoding), read back through Prometheus itself.
gzip_served() {
  [[ $(query 'roce_exporter_http_response_bytes_total{job="roce-qos-exporter",encoding="gzip"} > 0') ]]
}
poll 30 gzip_served && pass "Prometheus scrapes took the gzip path: $(query 'roce_exporter_http_response_bytes_total{job="roce-qos-exporter",encoding="gzip"}') gzip bytes served" ||
  fail "no gzip body served to Prometheus: $(query 'roce_exporter_http_response_bytes_total{job="roce-qos-exporter"}')"

# With PFC on priority 3 the storm series exist; the QoS families need the QoS stage.
missing=()
for family in roce_pfc_storm roce_pfc_storms_total roce_ecn_silent; do
  poll 15 bash -c "curl -sf '$prom/api/v1/query' --data-urlencode 'query=count($family)' | grep -q '\"result\":\[{'" ||
    missing+=("$family")
done
((${#missing[@]} == 0)) || fail "the exporter does not export: ${missing[*]}"
# The QoS scenarios need the QoS engine's families. Without them they are skipped, loudly, and
# fail under E2E_STRICT=1 (the exporter is then simply not the complete product yet).
qos=1
for family in roce_qos_drift roce_qos_in_sync; do
  poll 15 bash -c "curl -sf '$prom/api/v1/query' --data-urlencode 'query=count($family)' | grep -q '\"result\":\[{'" ||
    qos=0
done
skip_qos() {
  if [[ ${E2E_STRICT:-0} == 1 ]]; then
    fail "$1: the exporter exports no roce_qos_drift / roce_qos_in_sync (QoS engine not built in)"
  else
    echo "SKIP: $1: the exporter exports no roce_qos_drift / roce_qos_in_sync (QoS engine not built in)"
    result e2e_skipped "$1"
  fi
}

in_sync() { [[ $(query "min(roce_qos_in_sync{netdev=\"$sim\"})") == 1 ]]; }
if ((qos)); then
  poll $((qos_poll_s + 2 * scrape_s + slack_s)) in_sync ||
    fail "device $sim not in sync with the policy after configuring it"
else
  skip_qos "healthy baseline in sync with the policy"
fi
# ---- healthy: in policy, traffic with ECN, nothing may fire ----------------------------------
# Start-up transients (the first samples, the first QoS read) must have settled first.
poll $((max_for_s + storm_range_s + slack_s)) no_alerts_active ||
  fail "alerts still active before the healthy run: $(query 'ALERTS' | head -3)"
sleep $((group_interval_s + 1))  # let Alertmanager flush what it already has
# Long enough for every rendered rule to go through its for: (capped) and its lookback.
healthy_s=$((max_for_s + storm_range_s + 2 * eval_s + group_wait_s + slack_s))
t_healthy=$(now)
sleep "$healthy_s"  # observation period: nothing may happen during it
if [[ -z $(notifications_since "$t_healthy") ]] && no_alerts_active; then
  pass "healthy run of $healthy_s s: no alert pending, firing or notified"
else
  fail "healthy run: $(notifications_since "$t_healthy" | head -5) $(query 'ALERTS' | head -3)"
fi
result e2e_healthy_observed_seconds "$healthy_s"

# ---- ecn: pauses without marks or CNPs --------------------------------------------------------
t_ecn=$(now)
guest "simnic_ctl $sim 'rate np_ecn_marked_roce_packets 0; rate np_cnp_sent 0; rate rp_cnp_handled 0; rate rx_prio3_pause 2000; rate rx_prio3_pause_duration 300000'" ||
  fail "could not silence ECN in the guest"
# Silent only once the last mark of the healthy run has left the 1 m window.
bound=$(calc "$ecn_window_s + 1 + $sample_s + $scrape_s + $eval_s + $max_for_s + $eval_s + $group_wait_s + $slack_s")
expect_alert firing RoceQosEcnSilent "$t_ecn" "$bound" netdev="$sim"
if received firing RoceQosPfcStorm "$t_ecn" >/dev/null; then
  fail "RoceQosPfcStorm fired for 30 % pausing with traffic moving"
fi
guest "simnic_ctl $sim 'rate rx_prio3_pause 50; rate rx_prio3_pause_duration 2000; rate np_ecn_marked_roce_packets 400; rate np_cnp_sent 300; rate rp_cnp_handled 300'"
t_quiet=$(now)
bound=$(calc "$ecn_window_s + 1 + $scrape_s + $eval_s + $group_interval_s + $slack_s")
expect_alert resolved RoceQosEcnSilent "$t_quiet" "$bound" netdev="$sim"

# ---- storm: detection latency in the exporter, alert, resolution ------------------------------
# In the guest: start the storm, then poll /metrics; the snapshot's sample time minus the start
# time is the exporter's detection latency (same clock, no Prometheus involved).
t_storm=$(now)
latency=$({ echo "sim=$sim log=$exporter_log"; cat "$here/guest/storm-latency.sh"; } |
  "$TESTBED_GUEST_EXEC") ||
  fail "storm detection in the guest: $latency"
latency=$(tail -n1 <<<"$latency")
if [[ $latency =~ ^(-?[0-9]+)\ ([0-9]+)\ (-?[0-9]+)$ ]]; then
  lat_ms=${BASH_REMATCH[1]}
  result e2e_storm_detection_latency_ms "$lat_ms"
  result e2e_storm_start_write_ms "${BASH_REMATCH[2]}"
  result e2e_storm_first_scrape_ms "${BASH_REMATCH[3]}"
  # The port is idle before the storm, so it is read once per idle period; the read after the
  # start credits the onset from the pause-duration tail and a follow-up read confirms it: at most
  # one idle period + the follow-up after the start (docs/signals.md, "Onset credit"), and never
  # less than detection + one period, plus the guest's scheduling jitter.
  goal_ms=$(calc "($idle_s + $follow_s) * 1000")
  [[ $(calc "$goal_ms < ($detection_s + $sample_s) * 1000") == 1.000 ]] &&
    goal_ms=$(calc "($detection_s + $sample_s) * 1000")
  bound_ms=$(calc "$goal_ms + $sched_ms")
  if [[ $(calc "$lat_ms <= $bound_ms") == 1.000 ]]; then
    pass "exporter detected the storm ${lat_ms} ms after it started (goal detection + 1 period = ${goal_ms} ms, bound with ${sched_ms} ms jitter ${bound_ms} ms)"
  else
    fail "storm detection latency ${lat_ms} ms > ${bound_ms} ms"
  fi
else
  fail "storm detection in the guest printed no latency: $latency"
fi
bound=$(calc "$idle_s + $follow_s + $detection_s + $scrape_s + $eval_s + $eval_s + $group_wait_s + $slack_s")
# A storm of seconds is a warning; the critical wants one storm on after 1m, or 3 in 15m
# (alerts/README.md "Paging thresholds"), neither shortened by the rendering above.
expect_alert firing RoceQosPfcStorm "$t_storm" "$bound" netdev="$sim" prio=3 direction=rx severity=warning
storm_hold_s=5
sleep "$storm_hold_s"  # a storm of known length, so the recorded duration can be checked
t_stop=$(now)
guest "simnic_ctl $sim 'storm stop 3 rx'"
# Firing until the storm is restored and the episode counter's increase leaves the range.
bound=$(calc "$restoration_s + $sample_s + $storm_range_s + $scrape_s + $eval_s + $group_interval_s + $slack_s")
expect_alert resolved RoceQosPfcStorm "$t_stop" "$bound" netdev="$sim" prio=3 direction=rx severity=warning
if received firing RoceQosPfcStorm "$t_storm" severity=critical >/dev/null; then
  fail "RoceQosPfcStorm paged (critical) for one storm of ${storm_hold_s} s"
else
  pass "one storm of ${storm_hold_s} s: RoceQosPfcStorm warning only, no critical"
fi
duration=$(query "roce_pfc_storm_last_duration_seconds{netdev=\"$sim\",prio=\"3\",direction=\"rx\"}")
episodes=$(query "roce_pfc_storms_total{netdev=\"$sim\",prio=\"3\",direction=\"rx\"}")
result e2e_storm_last_duration_seconds "${duration:-none}"
result e2e_storm_episodes "${episodes:-none}"
if [[ $episodes == 1 && -n $duration && $(calc "$duration >= $storm_hold_s") == 1.000 ]]; then
  pass "one storm episode recorded, last duration $duration s (held >= $storm_hold_s s)"
else
  fail "storm bookkeeping: episodes=$episodes last duration=$duration (expected 1 and >= $storm_hold_s s)"
fi

# ---- origin: a tx storm, one incident through Alertmanager with the shipped inhibition ---------
# `storm start 3 tx`: the port pauses its peer while nothing it receives on priority 3 moves, so
# this host is where the storm starts (roce_pfc_storm_role{role="origin"}). The origin alert must
# be delivered; RoceQosPfcStorm for the same tx storm fires in Prometheus but Alertmanager keeps
# it from the webhook (alerts/alertmanager-inhibit.yaml) while the origin fires. The rx storm
# above, with no origin anywhere, was delivered under the same inhibit rules.
# The NIC's stall prevention (simnic loads with 8 s) would end a tx storm on its own, before or
# during the checks below: off, the storm lasts until `storm stop`; restored after the scenario.
guest "ethtool --get-tunable $sim pfc-prevention-tout | awk '{ print \$NF }' >/run/e2e-prevention
ethtool --set-tunable $sim pfc-prevention-tout 0" || fail "cannot turn the stall prevention off on $sim"
t_origin=$(now)
guest "simnic_ctl $sim 'storm start 3 tx'" || fail "storm start 3 tx on $sim"
bound=$(calc "$idle_s + $follow_s + $detection_s + $scrape_s + $eval_s + $eval_s + $group_wait_s + $slack_s")
expect_alert firing RoceQosPfcStormOrigin "$t_origin" "$bound" netdev="$sim" severity=warning
tx_storm_alert() {
  local alert="alertname=\"RoceQosPfcStorm\",alertstate=\"firing\",netdev=\"$sim\",direction=\"tx\""
  [[ $(query "ALERTS{$alert}") ]]
}
poll "$bound" tx_storm_alert && pass "RoceQosPfcStorm fires in Prometheus for the tx storm" ||
  fail "RoceQosPfcStorm for the tx storm on $sim not firing in Prometheus"
# am_tx_storm_inhibited: Alertmanager holds RoceQosPfcStorm of the tx storm as suppressed, inhibited
# by the origin alert (its fingerprint in inhibitedBy); prints what it saw.
am_tx_storm_inhibited() {
  curl -sf "http://127.0.0.1:$am_port/api/v2/alerts" | python3 -c '
import json, sys
sim, alerts = sys.argv[1], json.load(sys.stdin)
def find(name, **want):
    want.update(alertname=name, netdev=sim)
    return [a for a in alerts if all(a["labels"].get(k) == v for k, v in want.items())]
origin, storm = find("RoceQosPfcStormOrigin"), find("RoceQosPfcStorm", direction="tx")
if not origin or not storm:
    print(f"origin {len(origin)} storm {len(storm)}")
    sys.exit(1)
status = storm[0]["status"]
print(status["state"], "inhibitedBy", status["inhibitedBy"], "origin", origin[0]["fingerprint"])
inhibited = status["state"] == "suppressed" and origin[0]["fingerprint"] in status["inhibitedBy"]
sys.exit(0 if inhibited else 1)' "$sim"
}
if poll "$bound" am_tx_storm_inhibited >/dev/null; then
  result e2e_origin_storm_inhibited_seconds "$(calc "$(now) - $t_origin")"
  pass "Alertmanager: RoceQosPfcStorm (tx) $(am_tx_storm_inhibited)"
else
  fail "Alertmanager does not inhibit RoceQosPfcStorm (tx) by the origin: $(am_tx_storm_inhibited)"
fi
sleep "$storm_hold_s"  # both alerts active for several group intervals: time to leak to the webhook
am_tx_storm_inhibited >/dev/null && pass "still inhibited after ${storm_hold_s} s more" ||
  fail "no longer inhibited after ${storm_hold_s} s: $(am_tx_storm_inhibited)"
t_stop=$(now)
guest "simnic_ctl $sim 'storm stop 3 tx'
ethtool --set-tunable $sim pfc-prevention-tout \$(cat /run/e2e-prevention)" ||
  fail "storm stop 3 tx, or restoring the stall prevention, on $sim"
# RoceQosPfcStorm stays until 2m (20 s rendered) after its storm started; the origin alert until
# the port was last the origin that long ago, so it outlasts the storm alert it inhibits: the
# storm alert resolves in Prometheus first, under the inhibition.
tx_storm_resolved() { ! tx_storm_alert; }
bound=$(calc "$restoration_s + $sample_s + $storm_range_s + $scrape_s + $eval_s + $slack_s")
poll "$bound" tx_storm_resolved &&
  pass "RoceQosPfcStorm (tx) resolved in Prometheus $(calc "$(now) - $t_stop") s after the stop" \
    "(bound $bound s)" ||
  fail "RoceQosPfcStorm (tx) still firing $bound s after the storm stopped"
origin_alert() {
  [[ $(query "ALERTS{alertname=\"RoceQosPfcStormOrigin\",alertstate=\"firing\",netdev=\"$sim\"}") ]]
}
origin_alert && pass "RoceQosPfcStormOrigin still firing when RoceQosPfcStorm (tx) has resolved" ||
  fail "RoceQosPfcStormOrigin ended before the storm alert it inhibits"
bound=$(calc "$restoration_s + $sample_s + $storm_range_s + $scrape_s + $eval_s + $group_interval_s + $slack_s")
expect_alert resolved RoceQosPfcStormOrigin "$t_stop" "$bound" netdev="$sim" severity=warning
# leaked_while_origin: RoceQosPfcStorm (tx) notifications received between the storm start and
# the origin alert's end (endsAt of its resolved notification); prints them.
leaked_while_origin() {
  python3 - "$record" "$t_origin" "$sim" <<'EOF'
import datetime, json, re, sys
path, since, sim = sys.argv[1], float(sys.argv[2]), sys.argv[3]
def epoch(rfc3339):  # Prometheus writes nanoseconds; fromisoformat takes at most microseconds
    micros = re.sub(r"(\.\d{6})\d*", r"\1", rfc3339.replace("Z", "+00:00"))
    return datetime.datetime.fromisoformat(micros).timestamp()
rows = [json.loads(line) for line in open(path, encoding="utf-8")]
ends = [epoch(a["endsAt"]) for a in rows if a["received"] > since and a["status"] == "resolved"
        and a["alertname"] == "RoceQosPfcStormOrigin" and a["labels"].get("netdev") == sim]
end = ends[0] if ends else float("inf")
leaked = [a for a in rows if since < a["received"] <= end and a["alertname"] == "RoceQosPfcStorm"
          and a["labels"].get("netdev") == sim and a["labels"].get("direction") == "tx"]
for a in leaked:
    print(a["status"], f'{a["received"] - since:.3f}', json.dumps(a["labels"], sort_keys=True))
sys.exit(1 if leaked or not ends else 0)
EOF
}
leaked=$(leaked_while_origin) &&
  pass "the webhook got no RoceQosPfcStorm (tx) while the origin alert was active" ||
  fail "RoceQosPfcStorm (tx) reached the webhook while the origin alert was active: $leaked"
# Resolved before the inhibition lifted, the storm alert is never delivered at all.
if trailing=$(received firing RoceQosPfcStorm "$t_origin" netdev="$sim" direction=tx); then
  fail "RoceQosPfcStorm (tx) delivered $(calc "$trailing - $t_origin") s after the storm start"
else
  pass "RoceQosPfcStorm (tx) of the origin incident never reached the webhook"
fi
result e2e_origin_scenario_seconds "$(calc "$(now) - $t_origin")"

# ---- drift: PFC turned off on the RoCE priority with dcb ---------------------------------------
if ((qos)); then
  t_drift=$(now)
  guest "dcb pfc set dev $sim prio-pfc all:off 4:on" || fail "dcb pfc set failed in the guest"
  bound=$(calc "$qos_poll_s + $scrape_s + $eval_s + $max_for_s + $eval_s + $group_wait_s + $slack_s")
  expect_alert firing RoceQosDrift "$t_drift" "$bound" netdev="$sim" field=pfc severity=critical
else
  skip_qos "drift scenario"
fi

# ---- workloads: two jobs on two NICs; a storm on one names exactly its pod and the pod's GPUs --
# Soft-RoCE over both simnic ports; a pod (kubelet- and containerd-shaped cgroup, its
# /var/log/pods directory) holds a QP on the first, a Slurm job on the second; the fake
# kubelet (tests/tools/fake_kubelet, the real PodResources v1 gRPC API) allocates the pod a GPU.
# The exporter restarts with both ports and attribution on (docs/attribution.md).
sim2=$(guest 'simnic_netdevs | sed -n 2p')
[[ -n $sim2 ]] || fail "no second simnic netdev in the guest"
pod_uid=6f1c2a4e-0d5b-4c1e-9a57-3b8f0e2d7c11
pod_gpu=GPU-2f6b1c9e-8a4d-4b7e-9c1f-0d3e5a7b9c21
guest "stop_exporter
dcb pfc set dev $sim prio-pfc all:off 3:on  # as before the drift scenario: the storm series need PFC on 3
ib2=\$(rdma_links | awk -v n=$sim2 '\$2 == n { split(\$1, a, \"/\"); print a[1] }')
simnic_conform_default_policy $sim2 \$ib2
workload_rxe $sim 192.168.81.1 rxa
workload_rxe $sim2 192.168.82.1 rxb
workload_qps \$(workload_pod_cgroup ml trainer-0 $pod_uid) rxa 7001 pod
workload_qps \$(workload_slurm_cgroup 4242) rxb 7002 job
printf '%s\n' 'pods:' '- namespace: ml' '  name: trainer-0' '  containers:' '  - name: trainer' \
  '    devices:' '    - resource: nvidia.com/gpu' '      ids: [$pod_gpu]' >/run/e2e-pods.yaml
/testbed/bin/fake_kubelet --socket /run/e2e-kubelet.sock --pods /run/e2e-pods.yaml >/run/e2e-kubelet.log 2>&1 &
echo \$! >/run/e2e-kubelet.pid
wait_for 10 test -S /run/e2e-kubelet.sock || fail \"fake kubelet: \$(cat /run/e2e-kubelet.log)\"
EXPORTER_LOG=$exporter_log
start_exporter --sampler.period=250ms --storm.detection-time=200ms --storm.restoration-time=400ms --collector.device-include='^($sim|$sim2)\$' --attribution.interval=1s --attribution.kubelet-socket=/run/e2e-kubelet.sock" ||
  fail "could not start the two jobs and the exporter with attribution in the guest"
# Both jobs known to Prometheus, and the join the alerts read evaluated.
workloads_known() {
  [[ $(query "netdev:roce_workload:info{netdev=\"$sim\",workload=\"ml/trainer-0\"}") &&
    $(query "netdev:roce_workload:info{netdev=\"$sim2\",workload=\"4242\"}") &&
    $(query "roce_workload_gpu_info{pod_uid=\"$pod_uid\",device_id=\"$pod_gpu\"}") ]]
}
poll $((15 + 3 * scrape_s + slack_s)) workloads_known &&
  pass "Prometheus has the pod on $sim, the Slurm job on $sim2 and the pod's GPU from the kubelet" ||
  fail "workloads not in Prometheus: $(query 'roce_workload_qps') / $(query 'netdev:roce_workload:info')"
t_wl=$(now)
guest "simnic_ctl $sim 'storm start 3 rx'" || fail "storm start on $sim"
bound=$(calc "$idle_s + $follow_s + $detection_s + $scrape_s + $eval_s + $eval_s + $group_wait_s + $slack_s")
expect_alert firing RoceQosPfcStorm "$t_wl" "$bound" netdev="$sim" workload=ml/trainer-0 workload_kind=pod \
  pod_namespace=ml pod_name=trainer-0
annotation=$(python3 - "$record" "$t_wl" "$sim" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    a = json.loads(line)
    if a["status"] == "firing" and a["alertname"] == "RoceQosPfcStorm" and a["received"] > float(sys.argv[2]) \
            and a["labels"].get("netdev") == sys.argv[3]:
        print(a["annotations"].get("workloads", ""))
        break
PY
)
result e2e_storm_workloads_annotation "\"$annotation\""
[[ $annotation == *"ml/trainer-0 (pod, "* && $annotation == *"$pod_gpu (trainer-0)"* && $annotation != *4242* ]] &&
  pass "the storm's annotation names the pod and its GPU, not the job on $sim2: $annotation" ||
  fail "the storm's workloads annotation: '$annotation'"
guest "simnic_ctl $sim 'storm stop 3 rx'"
if received firing RoceQosPfcStorm "$t_wl" netdev="$sim2" >/dev/null || received firing RoceQosPfcStorm "$t_wl" workload=4242 >/dev/null; then
  fail "a storm alert for $sim2 or the Slurm job: $(notifications_since "$t_wl" | head -5)"
else
  pass "no storm alert on $sim2 nor for the Slurm job 4242"
fi
guest "workload_stop pod; workload_stop job; kill \$(cat /run/e2e-kubelet.pid) 2>/dev/null
rdma link del rxa; rdma link del rxb; ip addr del 192.168.81.1/24 dev $sim; ip addr del 192.168.82.1/24 dev $sim2; true"

guest 'exporter_alive; stop_exporter' || fail "the exporter did not survive or stop cleanly"
if ((failures)); then
  echo "e2e: $failures check(s) failed (results: $results)" >&2
  exit 1
fi
echo "e2e: all scenarios passed (results: $results)"
