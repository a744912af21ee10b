# shellcheck shell=sh
# Drift detection on the simulated ConnectX configured like the default policy:
#  * a drift made with `dcb` (RTNLGRP_DCB notification) shows in /metrics within 100 ms: measured
#    end to end (dcb returned -> a fetch of /metrics shows it) and by the exporter itself
#    (roce_qos_detection_latency_seconds: notification received -> snapshot ready), at the default
#    250 ms sample period and at a 500 ms period where only the notification path can be that
#    fast every time (the sampler's own cadence would give 250 ms on average);
#  * a drift made through the simnic control file (no notification, as firmware or a DCBX peer)
#    is caught by the poll (--qos.poll-interval=2s);
#  * `roce_qos_exporter check` agrees (exit 0 in sync, 1 on drift, with the reason).
# Each run prints QOS_DETECTION_LATENCY lines with the figures.
require exporter simnic
sim=$(simnic_netdevs | head -n1)
ibdev=$(ibdev_of "$sim")
[ -n "$ibdev" ] || fail "no RDMA device bound to $sim"

# The embedded default policy: trust dscp, PFC on 3 only, DSCP 24/26 -> 3, 48 -> 6, DCQCN on 3,
# ToS 106, tcp_ecn 1.
simnic_conform_default_policy "$sim" "$ibdev"

unlabeled() { awk -v n="$2" '$1 == n { print $2 }' "$1"; }
in_sync() { num_eq 1 "$(metric roce_qos_in_sync netdev="$sim")"; }

# measure FIELD VALUE CMD...: runs CMD, then fetches /metrics as fast as the guest can (one wget
# and one grep per try) until roce_qos_drift{netdev=$sim,field=FIELD} is VALUE. Appends
# "after_return_ms exporter_seconds" to latencies.txt. The end-to-end figure is an upper bound:
# it includes the fetch that saw the change (its cost is measured below).
measure() {
  _f=$1 _v=$2
  shift 2
  _want="roce_qos_drift{netdev=\"$sim\",field=\"$_f\"} $_v"
  uptime_cs
  _t0=$_cs
  "$@" || fail "$* failed"
  uptime_cs
  _t1=$_cs
  until wget -q -O - "$EXPORTER_URL/metrics" | grep -qxF "$_want"; do
    uptime_cs
    [ $((_cs - _t0)) -lt 500 ] || fail "roce_qos_drift{field=$_f} did not become $_v within 5 s of: $*"
  done
  uptime_cs
  _t2=$_cs
  scrape "$TESTBED_WORK/m.txt"
  _ex=$(unlabeled "$TESTBED_WORK/m.txt" roce_qos_detection_latency_seconds)
  echo "$(((_t2 - _t1) * 10)) $_ex" >>latencies.txt
  log "$*: command $(((_t1 - _t0) * 10)) ms; in /metrics $(((_t2 - _t1) * 10)) ms after it returned; exporter: notification -> snapshot ${_ex} s"
}

# run_changes TAG: 12 notified drifts and returns; per change "after_return_ms exporter_seconds"
# in latencies-TAG.txt, a summary in the log and one QOS_DETECTION_LATENCY line.
run_changes() {
  : >latencies.txt
  for round in 1 2 3 4 5; do
    measure pfc 1 dcb pfc set dev "$sim" prio-pfc 3:off
    measure pfc 0 dcb pfc set dev "$sim" prio-pfc 3:on
  done
  measure dscp_prio 1 dcb app del dev "$sim" dscp-prio 26:3
  measure dscp_prio 0 dcb app add dev "$sim" dscp-prio 26:3
  mv latencies.txt "latencies-$1.txt"
  e2e_median=$(sort -n "latencies-$1.txt" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  e2e_max=$(awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }' "latencies-$1.txt")
  ex_median=$(awk '{ print $2 }' "latencies-$1.txt" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  ex_max=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }' "latencies-$1.txt")
  log "$1: 12 changes shown in /metrics median ${e2e_median} ms, max ${e2e_max} ms after dcb returned (10 ms clock, includes the ~${fetch_ms} ms fetch); notification -> snapshot median ${ex_median} s, max ${ex_max} s"
  echo "QOS_DETECTION_LATENCY $1 e2e_median_ms=$e2e_median e2e_max_ms=$e2e_max fetch_ms=$fetch_ms exporter_median_s=$ex_median exporter_max_s=$ex_max"
}

start_exporter --qos.poll-interval=2s --qos.dcqcn-poll-interval=2s
wait_for 10 in_sync || fail "$sim configured like the default policy is not in sync: $(grep "$sim" "$METRICS" | grep -E 'roce_qos_(drift|observed)')"
"$EXPORTER" check --netdev "$sim" >check.txt 2>&1 || fail "check exit $? on an in-sync device: $(cat check.txt)"
assert_match "^$sim .*: in sync" "$(grep "^$sim " check.txt)" "check verdict"

# What one fetch of /metrics plus a grep costs in this guest (the floor of the end-to-end figure).
uptime_cs
_f0=$_cs
for i in 1 2 3 4 5; do wget -q -O - "$EXPORTER_URL/metrics" | grep -q '^roce_qos_in_sync' || fail "no in_sync"; done
uptime_cs
fetch_ms=$(((_cs - _f0) * 10 / 5))
log "one /metrics fetch + grep in this guest: ${fetch_ms} ms"

# 1. Notified drifts at the default 250 ms sample period.
scrape
notifications_before=$(unlabeled "$METRICS" roce_qos_change_notifications_total)
run_changes period-250ms
scrape
[ "$(unlabeled "$METRICS" roce_qos_change_notifications_total)" -gt "$notifications_before" ] ||
  fail "the DCB sets were not counted as notifications"
num_eq 1 "$(metric roce_qos_drift_events_total netdev="$sim" field=dscp_prio)" ||
  fail "dscp_prio drift events: $(metric roce_qos_drift_events_total netdev="$sim" field=dscp_prio)"
# The median, not the max: a notification that arrives during a sample waits for it, and this TCG
# guest on a shared host takes tens of ms per sample.
awk -v m="$ex_median" 'BEGIN { exit !(m < 0.1) }' || fail "notification -> snapshot median ${ex_median} s (>= 100 ms)"

# 2. No notification: PFC changed behind the host's back; only the 2 s poll can see it. The bound
# is on the exporter's own clock (roce_qos_last_change_timestamp_seconds: the evaluation that saw
# the change), since this guest's /metrics polling adds its own, load-dependent, delay: a poll is
# due at the first sample at or after the 2 s interval (250 ms period), plus 0.5 s for the pass.
seq_before=$(simnic_dcb_event_seq "$sim")
uptime_cs
t0=$_cs
t0_wall=$(now_s)
simnic_ctl "$sim" "pfc 0x00"
pfc_drift() { num_eq 1 "$(metric roce_qos_drift netdev="$sim" field=pfc)"; }
wait_for 8 pfc_drift || fail "the poll did not catch PFC turned off through the control file"
uptime_cs
poll_ms=$(((_cs - t0) * 10))
assert_eq "$seq_before" "$(simnic_dcb_event_seq "$sim")" "the control file must not notify"
seen_at=$(metric roce_qos_last_change_timestamp_seconds netdev="$sim")
exporter_ms=$(awk -v a="$t0_wall" -v b="$seen_at" 'BEGIN { printf "%d", (b - a) * 1000 }')
log "the poll caught the silent change ${exporter_ms} ms after it was made (exporter's clock); in /metrics after ${poll_ms} ms (poll interval 2 s)"
echo "QOS_POLL_DETECTION exporter_ms=$exporter_ms e2e_ms=$poll_ms interval_ms=2000"
[ "$exporter_ms" -ge 0 ] || fail "the exporter's last change ($seen_at) predates the change made at $t0_wall"
[ "$exporter_ms" -le 2750 ] ||
  fail "the exporter saw the silent change ${exporter_ms} ms after it was made: more than one poll interval + one sample period + 0.5 s"
"$EXPORTER" check --netdev "$sim" >check.txt 2>&1
assert_eq 1 $? "check exit status with PFC off"
grep -q "PFC off on priority 3: RoCE traffic there becomes lossy" check.txt || fail "check does not explain: $(cat check.txt)"
simnic_ctl "$sim" "pfc 0x08"
wait_for 8 in_sync || fail "not back in sync after PFC was restored through the control file"

# CNP marking (MOFED ecn/roce_np sysfs, no notification): drift per field, found by the poll.
cnp=/sys/class/net/"$sim"/ecn/roce_np
assert_eq 48 "$(cat "$cnp"/cnp_dscp)" "simnic's default cnp_dscp"
echo 26 >"$cnp"/cnp_dscp
cnp_dscp_drift() { num_eq 1 "$(metric roce_qos_drift netdev="$sim" field=cnp_dscp)"; }
wait_for 8 cnp_dscp_drift || fail "cnp_dscp 26 not shown as drift: $(grep "$sim" "$METRICS" | grep -E 'cnp')"
num_eq 0 "$(metric roce_qos_drift netdev="$sim" field=cnp_802p_prio)" || fail "cnp_802p_prio drifted too"
num_eq 26 "$(metric roce_qos_cnp_dscp netdev="$sim")" || fail "roce_qos_cnp_dscp is not 26"
"$EXPORTER" check --netdev "$sim" >check.txt 2>&1
assert_eq 1 $? "check exit status with cnp_dscp 26"
tr -s ' \n' '  ' <check.txt | grep -q "CNPs leave with another DSCP" || fail "check does not explain the CNP drift: $(cat check.txt)"
echo 48 >"$cnp"/cnp_dscp
echo 3 >"$cnp"/cnp_802p_prio
cnp_prio_drift() { num_eq 1 "$(metric roce_qos_drift netdev="$sim" field=cnp_802p_prio)"; }
wait_for 8 cnp_prio_drift || fail "cnp_802p_prio 3 not shown as drift"
echo 6 >"$cnp"/cnp_802p_prio
wait_for 8 in_sync || fail "not back in sync after the CNP marking was restored"

# 3. With a 500 ms sample period the cadence alone would show a change after a wait spread evenly
# over 0-500 ms: under 100 ms for one change in five. At least 9 of 12 under 100 ms (exporter
# side) happen that way with probability 6.2e-5 (binomial, p = 0.2), so only through the
# notification path. Not all 12: a notification that arrives while a sample runs waits for it, and
# on a loaded 2-core host up to two of 12 waits took 0.10-0.22 s (5.10 and 6.12, docs/kernels.md).
stop_exporter
start_exporter --qos.poll-interval=2s --qos.dcqcn-poll-interval=2s --sampler.period=500ms
wait_for 10 in_sync || fail "not in sync after the restart"
run_changes period-500ms
ex_fast=$(awk '$2 < 0.1 { n++ } END { print n + 0 }' latencies-period-500ms.txt)
echo "QOS_DETECTION_FAST period-500ms under_100ms=$ex_fast of=12"
[ "$ex_fast" -ge 9 ] || fail "only $ex_fast of 12 notification -> snapshot under 100 ms (max ${ex_max} s): the notification did not wake the sampler"
# End to end (dcb returned -> a fetch shows it) the same allowance: a stall of the guest (0.71 s once
# on 6.1 with three VMs on the 2 cores) delays one change, not the path.
e2e_fast=$(awk '$1 < 500 { n++ } END { print n + 0 }' latencies-period-500ms.txt)
[ "$e2e_fast" -ge 9 ] || fail "with a 500 ms period only $e2e_fast of 12 changes showed within 500 ms (max ${e2e_max} ms)"

# 4. check: a deleted DSCP entry is drift (exit 1) and named.
dcb app del dev "$sim" dscp-prio 26:3
"$EXPORTER" check --netdev "$sim" >check.txt 2>&1
assert_eq 1 $? "check exit status on drift"
grep -q 'DSCP 26 -> none (expected 3)' check.txt || fail "check does not name the missing DSCP: $(cat check.txt)"
exporter_alive
stop_exporter
