# shellcheck shell=sh
# Remediation under faults (docs/remediation.md), against the simulated ConnectX with a slow write
# path (simnic write_latency_ms: every DCB set and ecn enable write sleeps first, killably: a
# writer killed in the sleep never reaches the port; ecn_write_latency_ms holds the ecn writes
# alone), so a SIGKILL can land before, between and after the individual writes of one apply.
# Kill points are found from the exporter's state file and the device itself, never from a sleep:
#  * killed between two writes: the device is half-applied; an observing instance shows exactly
#    the missing field as drift; the restarted enforcer logs the interrupted apply and converges
#    in its first pass;
#  * killed with the apply recorded but before the device changed, and after the apply: both
#    converge, and after a completed apply the restart writes nothing;
#  * a second enforcing instance is refused (log, roce_qos_remediation_enforce_held_elsewhere 1,
#    observe mode) while the first holds the lock;
#  * 100 reloads of an unchanged policy file leave a device in back-off alone (no write);
#  * a truncated or half-written policy file is rejected and the old policy stays.
require exporter simnic
sim=$(simnic_netdevs | sed -n 1p)
lat=/sys/module/simnic/parameters/write_latency_ms
ecn_lat=/sys/module/simnic/parameters/ecn_write_latency_ms
if ! [ -w "$lat" ] || ! [ -w "$ecn_lat" ]; then skip "this simnic has no write_latency_ms parameters"; fi
# A held write waits until it is killed (or this long): far longer than any check below takes.
hold=120000

# The embedded default policy on DEV (tcp_ecn too).
conform() { simnic_conform_default_policy "$1" "$(ibdev_of "$1")"; }
echo 0 >"$lat"
conform "$sim"

state=$TESTBED_WORK/remediation.json
lock=$TESTBED_WORK/enforce.lock
policy=$TESTBED_WORK/policy.yaml
printf 'defaults:\n  pfc: [3]\n' >"$policy"
# Only this port: the second simnic port is not made conforming here, and its writes (slow too)
# would share the pass budget and the kill points.
only="--collector.device-include=^$sim\$"
set -- "$only" --remediation=enforce --remediation.backoff=1s --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
  --remediation.state-file="$state" --remediation.lock-file="$lock" --config="$policy"
enforce_flags="$*"

pfc3() { dcb pfc show dev "$sim" | sed -n 's/.* 3:\(o[nf]*\) .*/\1/p'; }
pfc3_is() { [ "$(pfc3)" = "$1" ]; }
np3() { cat /sys/class/net/"$sim"/ecn/roce_np/enable/3; }
in_sync() { num_eq 1 "$(metric roce_qos_in_sync netdev="$sim")"; }
# The device's entry in the state file: keyed by its PCI identity with "netdev": "<name>" inside
# (version 2), or by the netdev name (version 1).
entry='("'"$sim"'": \{|"netdev": "'"$sim"'")'
in_progress() { grep -Eq "${entry}[^}]*\"apply_in_progress\": true" "$state" 2>/dev/null; }
# An attempt was counted and its apply ended (the count and the mark are saved together).
done_apply() { grep -Eq "${entry}[^}]*\"attempts\": [1-9][^}]*\"apply_in_progress\": false" "$state" 2>/dev/null; }
count() { metric roce_qos_remediations_total netdev="$sim" field="$1" result="$2" || echo 0; }
# The apply runs on the remediation worker: its counts reach /metrics with the snapshot after the
# one that shows the device in sync. A count that must grow is waited for, then asserted.
count_is() { num_eq "$3" "$(count "$1" "$2")"; }
assert_count() {  # field result n message
  wait_for 10 count_is "$1" "$2" "$3" || true
  assert_num_eq "$3" "$(count "$1" "$2")" "$4"
}
# Starts an enforcer without waiting for /-/ready: its first pass is the apply to interrupt.
spawn() {
  # shellcheck disable=SC2086
  "$EXPORTER" --web.listen-address=:"$EXPORTER_PORT" $enforce_flags >>"$EXPORTER_LOG" 2>&1 &
  EXPORTER_PID=$!
  echo "$EXPORTER_PID" >"$EXPORTER_PIDFILE"
}
kill9() {
  kill -KILL "$EXPORTER_PID"
  wait "$EXPORTER_PID" 2>/dev/null
  EXPORTER_PID=
  rm -f "$EXPORTER_PIDFILE"
}
between() { pfc3_is on && [ "$(np3)" = 0 ]; }
no_progress() {
  tail -n 20 "$EXPORTER_LOG" >&2
  fail "the state file never recorded the apply in progress: $(cat "$state" 2>&1)"
}

# --- killed between two writes --------------------------------------------------------------------
log "killed between two writes"
# Three writes: PFC (IEEE_SET, 1.5 s), then ecn roce_np and roce_rp enable 3, held: once PFC
# reads on and np enable 3 still 0, the exporter sits in the np write (or just before it) until
# the kill, which that write then never outlives.
rm -f "$state"
dcb pfc set dev "$sim" prio-pfc 3:off
echo 0 >/sys/class/net/"$sim"/ecn/roce_np/enable/3
echo 0 >/sys/class/net/"$sim"/ecn/roce_rp/enable/3
echo 1500 >"$lat"
echo "$hold" >"$ecn_lat"
spawn
wait_for 60 in_progress || no_progress
wait_for 60 between || fail "no point between the PFC write and the ecn writes (pfc3=$(pfc3) np3=$(np3))"
kill9
pfc3_is on || fail "the PFC write should have been made"
assert_eq 0 "$(np3)" "killed before the ecn write"
in_progress || fail "the state file lost the apply in progress"
echo 0 >"$lat"
echo 0 >"$ecn_lat"
# An observer sees exactly what is missing.
start_exporter "$only" --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms --config="$policy"
assert_num_eq 0 "$(metric roce_qos_drift netdev="$sim" field=pfc)" "half-applied: pfc"
assert_num_eq 1 "$(metric roce_qos_drift netdev="$sim" field=dcqcn_np)" "half-applied: dcqcn_np"
stop_exporter
t0=$(cut -d' ' -f1 /proc/uptime)
# shellcheck disable=SC2086
start_exporter $enforce_flags
grep "the previous process ended in the middle of an apply" "$EXPORTER_LOG" | grep -q "netdev=$sim " ||
  fail "the interrupted apply was not logged"
# The killed attempt counts and its 1 s back-off is restored (a crash loop must not step around
# it): converged within that back-off and one poll.
wait_for 10 in_sync || fail "not converged within the back-off and one poll after the restart"
# The figure docs/remediation.md quotes (start to in sync, including the exporter's start-up).
echo "REMEDIATION_FAULTS converged_after_restart_s=$(awk -v t="$t0" '{ printf "%.1f", $1 - t }' /proc/uptime)"
assert_count dcqcn_np success 1 "the restart wrote the missing ecn enable"
assert_num_eq 0 "$(count pfc success)" "and not the PFC part that had been applied"
stop_exporter

# --- killed before the device changed, and after the apply ----------------------------------------
log "killed before the device changed, and after the apply"
# The PFC write is held: the kill lands with the apply recorded and the device untouched. Each
# kill point starts from an empty state file: attempts of the previous point (back-off 1, 2, 4 s...)
# would otherwise stretch the wait.
rm -f "$state"
dcb pfc set dev "$sim" prio-pfc 3:off
echo "$hold" >"$lat"
spawn
wait_for 60 in_progress || no_progress
kill9
echo 0 >"$lat"
pfc3_is off || fail "killed in the held PFC write, yet PFC changed"
# shellcheck disable=SC2086
start_exporter $enforce_flags
wait_for 10 in_sync || fail "not converged within the back-off and one poll after a kill at the start of an apply"
assert_count pfc success 1 "the restart made the PFC write the kill prevented"
stop_exporter
rm -f "$state"
dcb pfc set dev "$sim" prio-pfc 3:off
spawn
wait_for 60 done_apply || fail "the apply did not complete"
wait_for 10 pfc3_is on || fail "PFC not restored"
kill9
# shellcheck disable=SC2086
start_exporter $enforce_flags
in_sync || fail "not in sync after a kill once the apply was done"
assert_num_eq 0 "$(count pfc success)" "nothing to write after a completed apply"

# --- one enforcer per node ------------------------------------------------------------------------
log "one enforcer per node"
second=$((EXPORTER_PORT + 1))
# shellcheck disable=SC2086
"$EXPORTER" --web.listen-address=:$second $enforce_flags >"$TESTBED_WORK/second.log" 2>&1 &
second_pid=$!
# /metrics answers before the first snapshot (build info only): wait for /-/ready, then read it.
second_ready() { wget -q -O /dev/null "http://127.0.0.1:$second/-/ready" 2>/dev/null; }
wait_for 60 second_ready || fail "the second instance did not start: $(tail -5 "$TESTBED_WORK/second.log")"
wget -q -O "$TESTBED_WORK/second.txt" "http://127.0.0.1:$second/metrics" || fail "GET :$second/metrics failed"
assert_num_eq 1 "$(metric_from "$TESTBED_WORK/second.txt" roce_qos_remediation_enforce_held_elsewhere)" \
  "second instance: enforce held elsewhere"
assert_num_eq 1 "$(metric_from "$TESTBED_WORK/second.txt" roce_qos_remediation_mode mode=off)" \
  "second instance observes"
grep "another instance holds the enforcer lock" "$TESTBED_WORK/second.log" | grep -q "holder_pid=$EXPORTER_PID " ||
  fail "the second instance did not log who holds the lock"
assert_num_eq 0 "$(metric roce_qos_remediation_enforce_held_elsewhere)" "the first still enforces"
kill -TERM "$second_pid"
wait "$second_pid"

# --- 100 reloads of the same file leave the back-off alone ----------------------------------------
log "100 reloads of the same file leave the back-off alone"
stop_exporter
set -- "$only" --remediation=enforce --remediation.backoff=1h --remediation.max-backoff=1h \
  --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
  --remediation.state-file="$state" --remediation.lock-file="$lock" --config="$policy"
rm -f "$state"
start_exporter "$@"
dcb pfc set dev "$sim" prio-pfc 3:off
wait_for 30 pfc3_is on || fail "first fix not made"
dcb pfc set dev "$sim" prio-pfc 3:off # undone again: now in back-off for an hour
backoff() { num_eq 1 "$(metric roce_qos_remediation_state netdev="$sim" state=backoff)"; }
wait_for 30 backoff || fail "not in back-off"
reloads() { grep -c "msg=\"policy reloaded\"" "$EXPORTER_LOG"; }
before=$(reloads)
i=0
while [ $i -lt 100 ]; do
  kill -HUP "$EXPORTER_PID"
  i=$((i + 1))
  reloaded() { [ "$(reloads)" -ge $((before + i)) ]; }
  wait_for 10 reloaded || fail "reload $i not done"
done
backoff || fail "100 reloads of the same file ended the back-off"
pfc3_is off || fail "a reload of the same file caused a write"
assert_num_eq 1 "$(count pfc success)" "one write in all"
if grep -q "attempts start over" "$EXPORTER_LOG"; then fail "a reload reset the attempts"; fi

# --- a truncated or half-written policy keeps the old one -----------------------------------------
log "a truncated or half-written policy keeps the old one"
hash() { metric_label "$TESTBED_WORK/metric.$$" roce_qos_policy_info hash netdev="$sim"; }
scrape "$TESTBED_WORK/metric.$$"
good=$(hash)
for bad in '' 'defaults:\n  pfc: [3' 'defaults:\n  pfc: [3, 9]\n'; do
  printf '%b' "$bad" >"$policy"
  rejected_before=$(grep -c "policy reload rejected" "$EXPORTER_LOG")
  kill -HUP "$EXPORTER_PID"
  rejected() { [ "$(grep -c "policy reload rejected" "$EXPORTER_LOG")" -gt "$rejected_before" ]; }
  wait_for 10 rejected || fail "policy '$bad' was not rejected"
  failed_reload() { num_eq 0 "$(metric roce_qos_policy_reload_success)"; }
  wait_for 10 failed_reload || fail "reload_success after '$bad': $(metric roce_qos_policy_reload_success)"
  assert_eq "$good" "$(hash)" "the old policy stays after '$bad'"
done
printf 'defaults:\n  pfc: [3]\n' >"$policy.new"
mv "$policy.new" "$policy"
kill -HUP "$EXPORTER_PID"
ok() { num_eq 1 "$(metric roce_qos_policy_reload_success)"; }
wait_for 10 ok || fail "a policy renamed into place was not accepted"
stop_exporter
conform "$sim"
