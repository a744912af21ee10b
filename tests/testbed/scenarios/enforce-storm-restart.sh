# shellcheck shell=sh
# An enforcer restarted after an unclean exit in the middle of a PFC storm writes nothing until the
# storm is over, like a fresh start (enforce-storm-start; docs/remediation.md, "No write during a
# storm"): nothing the first instance left behind (state file, lock file) may stand in for storm
# evidence the second one has not read yet.
#  * simnic: a tx storm on priority 3 (stall prevention off, so it pauses until stopped), DSCP 26
#    unmapped (`dcb app del`) and the RoCE ToS cleared: one DCB fix (the APP entry) and one sysfs
#    fix (tc/1/traffic_class) due;
#  * the exporter's DCB writes are counted with simnic's dcb_events (every IEEE_SET/IEEE_DEL is an
#    RTM_SETDCB notification with a global sequence number); the scenario's own `dcb` writes all
#    come before the baseline, and nothing else writes DCB afterwards;
#  * first enforcer: from its start until at least 6 s AND 20 samples (roce_exporter_samples_total)
#    have passed, 0 DCB writes, DSCP 26 and the ToS unchanged; then `kill -9`;
#  * second enforcer, same flags, state file and lock file: the same window, the same assertions,
#    the storm still pausing at its end;
#  * then the storm stops and the fix arrives (DSCP 26 -> 3, ToS 106) within 30 s: so the scenario
#    cannot pass by never writing; every exporter DCB write comes after the stop.
require exporter simnic
storm_on_drifted_port

enforce() {
  start_exporter --collector.device-include="^$sim\$" --config="$policy" --remediation=enforce \
    --remediation.backoff=1s --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
    --remediation.state-file="$TESTBED_WORK/remediation.json" \
    --remediation.lock-file="$TESTBED_WORK/enforce.lock"
}
# window NAME: scrapes until at least $window_s s since $t0 and $window_samples samples have passed
# (wait_for paces it), records the states shown; then asserts nothing was written meanwhile.
states=
samples=0
observe() {
  scrape "$TESTBED_WORK/w.txt"
  _st=$(state_in "$TESTBED_WORK/w.txt" | tr '\n' ' ' | sed 's/ $//')
  case " $states " in *" ${_st:-none} "*) ;; *) states="$states ${_st:-none}" ;; esac
  samples=$(metric_from "$TESTBED_WORK/w.txt" roce_exporter_samples_total)
  awk -v s="$samples" -v n=$window_samples -v t="$t0" -v w=$window_s '{ exit !(s + 0 >= n && $1 - t >= w) }' /proc/uptime
}
window() {
  states=
  t0=$(uptime_s)
  enforce
  wait_for 60 observe || log "$1: the window did not complete within 60 s ($samples samples)"
  _writes=$(simnic_dcb_sets_after "$sim" "$base")
  log "$1: ${window_s}+ s ($(since "$t0") s) from the start, $samples samples, states:$states"
  echo "ENFORCE_STORM_RESTART $1 window_s=$(since "$t0") samples=$samples dcb_writes_during_storm=$_writes"
  assert_eq pausing "$(simnic_storm_phase "$sim" 3 tx)" "$1: the storm ran through the window"
  exporter_alive
  assert_eq 0 "$_writes" "$1: exporter DCB writes during the storm ($(tail -n 3 "$SIMNIC_DEBUGFS/$sim/dcb_events" | tr '\n' ';'))"
  assert_eq "" "$(dscp26)" "$1: DSCP 26 during the storm (written?)"
  assert_eq "" "$(tos)" "$1: ToS during the storm (written?)"
}

window first
# An unclean exit: no shutdown path runs, the state and lock files stay as they were.
kill -KILL "$EXPORTER_PID"
wait "$EXPORTER_PID" 2>/dev/null
EXPORTER_PID=
rm -f "$EXPORTER_PIDFILE"
window restart
num_eq 1 "$(metric_from "$TESTBED_WORK/w.txt" roce_pfc_storm netdev="$sim" prio=3 direction=tx)" ||
  fail "the restarted exporter does not report the storm (roce_pfc_storm{prio=3,direction=tx})"

# --- the storm ends: now the fix -------------------------------------------------------------------
stop_seq=$(simnic_dcb_event_seq "$sim")
t_stop=$(uptime_s)
simnic_ctl "$sim" "storm stop all"
fixed() { [ "$(dscp26)" = 3 ] && [ "$(tos)" = "Global tclass=106" ]; }
wait_for 30 fixed || fail "not fixed within 30 s of the storm's end: DSCP 26 '$(dscp26)', ToS '$(tos)'"
after=$(simnic_dcb_sets_after "$sim" "$stop_seq")
total=$(simnic_dcb_sets_after "$sim" "$base")
echo "ENFORCE_STORM_RESTART fixed_after_stop_s=$(since "$t_stop") dcb_writes_after_stop=$after"
assert_eq "$total" "$after" "every exporter DCB write came after the storm stopped"
stop_exporter
