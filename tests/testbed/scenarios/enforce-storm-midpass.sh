# shellcheck shell=sh
# A storm that begins while enforce is busy writing another device stops the writes to its own
# device at once (docs/remediation.md, "No write during a storm"): the storm verdict that allows a
# write is the one at the moment of that write, not the one taken when the pass was planned.
#  * simnic, two ports, each drifted from the embedded default policy in two fields: DSCP 26
#    unmapped (a DCB APP set) and DCQCN NP disabled on priority 3 (ecn/roce_np/enable/3, a sysfs
#    write that comes after the APP set in a device's apply); drifted through the control file (no
#    DCB notification), so the next poll finds both at once and one remediation pass carries both;
#  * a warm-up round of the same drift, fixed fast, shows both ports written (the storm detector
#    has history saying "no storm") before the measured round;
#  * simnic's write_latency_ms holds every ecn enable write for $hold_ms (held without RTNL, so the
#    rest of the system, the sampler and the control file included, carries on meanwhile): shorter
#    than the pass's apply budget, longer than the storm detection time;
#  * whichever port enforce writes first (its APP set shows in dcb_events) is the "first" port; while
#    its ecn write is held, a tx PFC storm on priority 3 (stall prevention off) starts on the other
#    ("second") port, which has had no write yet;
#  * from then until the first port's held write has landed and 6 s more have passed, with the storm
#    pausing throughout: 0 exporter DCB writes to the second port (simnic dcb_events), its DSCP 26
#    still unmapped;
#  * then the storm stops, the held writes are made fast, and the second port is fixed within 30 s
#    (so the scenario cannot pass by never writing), every DCB write to it after the stop.
require exporter simnic
lat=/sys/module/simnic/parameters/write_latency_ms
[ -w "$lat" ] || skip "this simnic has no write_latency_ms parameter"
# Held for less than the pass's apply budget (3 s, docs/remediation.md), so the same pass goes on to
# the second port right after the held write, and longer than the storm detector needs to declare
# the storm (--storm.detection-time=500ms and a few samples), so evidence taken at the moment of
# the second port's write shows it.
hold_ms=2000
ports=$(simnic_netdevs | sed -n 1,2p | tr '\n' ' ')
# shellcheck disable=SC2086 # two names, split on purpose
set -- $ports
[ $# -eq 2 ] || fail "two simnic ports needed, have: $ports"

policy=$TESTBED_WORK/policy.yaml
"$EXPORTER" policy show-default >"$policy" || fail "policy show-default failed"
for p in $ports; do
  ib=$(ibdev_of "$p")
  [ -n "$ib" ] || fail "no RDMA device on $p"
  simnic_conform_default_policy "$p" "$ib"
done
link_up() { [ "$(cat /sys/class/net/"$1"/operstate)" = up ]; }
for p in $ports; do
  wait_for 10 link_up "$p" || fail "$p: link not up 10 s after the reload"
  # Set before any storm starts (the watermarks are taken at storm start).
  ethtool --set-tunable "$p" pfc-prevention-tout 0 || fail "cannot turn PFC stall prevention off on $p"
  simnic_ctl "$p" "rate * 0"
done
dscp26() { dcb -N app show dev "$1" | tr ' ' '\n' | sed -n 's/^26://p' | tr '\n' ' ' | sed 's/ $//'; }
np3() { cat /sys/class/net/"$1"/ecn/roce_np/enable/3; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v t="$1" '{ printf "%.1f", $1 - t }' /proc/uptime; }
# The latest DCB notification so far (seq is global, each port's file lists its own).
latest_seq() {
  _s=0
  for _p in $ports; do
    _n=$(simnic_dcb_event_seq "$_p")
    [ "$_n" -gt "$_s" ] && _s=$_n
  done
  echo "$_s"
}
# Drift through the control file: no DCB notification, so the next poll (every 500 ms, every
# device in one pass) finds both ports drifted at once and one remediation pass carries both.
drift_both() {
  for _p in $ports; do simnic_ctl "$_p" "app del 26 3; ecn np 3 0"; done
}
both_fixed() {
  for _p in $ports; do { [ "$(dscp26 "$_p")" = 3 ] && [ "$(np3 "$_p")" = 1 ]; } || return 1; done
}
both_in_sync() {
  scrape "$TESTBED_WORK/s.txt"
  for _p in $ports; do num_eq 1 "$(metric_from "$TESTBED_WORK/s.txt" roce_qos_in_sync netdev="$_p")" || return 1; done
}

echo 0 >"$lat"
t_start=$(uptime_s)
start_exporter --collector.device-include="^($1|$2)\$" --config="$policy" --remediation=enforce \
  --storm.detection-time=500ms --remediation.backoff=1s --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
  --remediation.state-file="$TESTBED_WORK/remediation.json" \
  --remediation.lock-file="$TESTBED_WORK/enforce.lock"
# Warm-up, writes fast: a drift on both ports is fixed, so both have storm evidence that says
# "no storm" and enforce writes them (a fresh enforcer writes nothing until its detector has seen
# enough history).
drift_both
wait_for 60 both_fixed || fail "warm-up: not fixed within 60 s of the start: DSCP 26 '$(dscp26 "$1")'/'$(dscp26 "$2")', NP 3 $(np3 "$1")/$(np3 "$2")"
wait_for 20 both_in_sync || fail "warm-up: not both in sync after the fix"
log "warm-up fixed and in sync $(since "$t_start") s after the start"

echo "$hold_ms" >"$lat"
base=$(latest_seq)
drift_both
assert_eq "" "$(dscp26 "$1")" "$1: DSCP 26 unmapped"
assert_eq "" "$(dscp26 "$2")" "$2: DSCP 26 unmapped"
t_drift=$(uptime_s)
log "$ports: DSCP 26 unmapped, NP 3 off (control file); ecn writes held ${hold_ms} ms; DCB notifications up to seq $base"

# The first port: the first to get an exporter DCB write. Its ecn write follows that APP set at once
# and is held for $hold_ms, which is when the other port's storm starts.
first=
first_written() {
  for _p in $ports; do
    if [ "$(simnic_dcb_sets_after "$_p" "$base")" -gt 0 ]; then
      first=$_p
      return 0
    fi
  done
  return 1
}
wait_for 60 first_written || fail "no DCB write within 60 s of the start"
second=$1
[ "$first" = "$1" ] && second=$2
simnic_ctl "$second" "storm start 3 tx"
t_storm=$(uptime_s)
second_before=$(simnic_dcb_sets_after "$second" "$base")
log "first write to $first $(since "$t_drift") s after the drift; storm started on $second" \
  "(its exporter DCB writes so far: $second_before, NP 3 of $first: $(np3 "$first"))"
# Precondition, not the property: the storm must begin before the second port's apply.
assert_eq 0 "$second_before" "exporter DCB writes to $second before its storm (the pass wrote it before the first port's held write?)"
assert_eq 0 "$(np3 "$first")" "$first: NP 3 still held when the storm started"

# The window: until the first port's held write has landed, then 6 s more; the storm pauses throughout.
landed=
observe() {
  [ -n "$landed" ] || { [ "$(np3 "$first")" = 1 ] && landed=$(uptime_s); }
  [ -n "$landed" ] && awk -v t="$landed" '{ exit !($1 - t >= 6) }' /proc/uptime
}
wait_for 60 observe || log "the first port's held write did not land within 60 s"
writes=$(simnic_dcb_sets_after "$second" "$base")
phase=$(simnic_storm_phase "$second" 3 tx)
echo "ENFORCE_STORM_MIDPASS first=$first second=$second storm_s=$(since "$t_storm")" \
  "first_landed=${landed:+yes} dcb_writes_to_second_during_storm=$writes dscp26_second='$(dscp26 "$second")'"
assert_eq pausing "$phase" "the storm on $second ran through the window"
exporter_alive
[ -n "$landed" ] || fail "the held ecn write on $first never landed"
# The exporter's account of the writes and the storm, for a failure's diagnosis.
[ "$writes" = 0 ] || grep -E 'remediation enforce|PFC storm' "$EXPORTER_LOG" | cut -c1-220 >&2
assert_eq 0 "$writes" "exporter DCB writes to $second during its storm ($(tail -n 3 "$SIMNIC_DEBUGFS/$second/dcb_events" | tr '\n' ';'))"
assert_eq "" "$(dscp26 "$second")" "$second: DSCP 26 during its storm (written?)"

# --- the storm ends: the second port is fixed ------------------------------------------------------
echo 0 >"$lat"
stop_seq=$(latest_seq)
t_stop=$(uptime_s)
simnic_ctl "$second" "storm stop all"
fixed() { [ "$(dscp26 "$second")" = 3 ] && [ "$(np3 "$second")" = 1 ]; }
wait_for 30 fixed || fail "$second not fixed within 30 s of the storm's end: DSCP 26 '$(dscp26 "$second")', NP 3 $(np3 "$second")"
after=$(simnic_dcb_sets_after "$second" "$stop_seq")
total=$(simnic_dcb_sets_after "$second" "$base")
echo "ENFORCE_STORM_MIDPASS second_fixed_after_stop_s=$(since "$t_stop") dcb_writes_to_second_after_stop=$after"
assert_eq "$total" "$after" "every exporter DCB write to $second came after its storm stopped"
stop_exporter
