# shellcheck shell=sh
# An enforcer started in the middle of a PFC storm writes nothing until the storm is over
# (docs/remediation.md, "No write during a storm"). The storm detector has no history right after a
# start, so it cannot say "no storm" yet: the device is blocked_unknown_storm, then blocked_storm once
# the storm is declared, and never written meanwhile.
#  * simnic: a tx storm on priority 3 (stall prevention off, so it pauses until stopped), DSCP 26
#    unmapped (`dcb app del`) and the RoCE ToS cleared: two fixes due, one DCB (the APP entry), one
#    sysfs (tc/1/traffic_class);
#  * the exporter's DCB writes are counted with simnic's dcb_events (every IEEE_SET/IEEE_DEL is an
#    RTM_SETDCB notification with a global sequence number); the scenario's own `dcb` writes all
#    come before the baseline sequence number, and nothing else writes DCB afterwards;
#  * window: from the exporter's start until at least 6 s have passed AND it has published at least
#    20 samples (roce_exporter_samples_total), every scrape must show blocked_unknown_storm or
#    blocked_storm, and at the end 0 DCB writes, DSCP 26 still unmapped and the ToS still cleared;
#  * then the storm stops and the fix arrives (DSCP 26 -> 3, ToS 106): its DCB writes all come
#    after the stop.
require exporter simnic
storm_on_drifted_port

t0=$(uptime_s)
start_exporter --collector.device-include="^$sim\$" --config="$policy" --remediation=enforce \
  --remediation.backoff=1s --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
  --remediation.state-file="$TESTBED_WORK/remediation.json" \
  --remediation.lock-file="$TESTBED_WORK/enforce.lock"

# One observation per call (wait_for paces it): status 0 once the window is complete.
n_scrapes=0
n_unknown=0
n_storm=0
n_none=0
bad=
samples=0
window() {
  scrape "$TESTBED_WORK/w.txt"
  n_scrapes=$((n_scrapes + 1))
  _st=$(state_in "$TESTBED_WORK/w.txt" | tr '\n' ' ' | sed 's/ $//')
  case $_st in
    blocked_unknown_storm) n_unknown=$((n_unknown + 1)) ;;
    blocked_storm) n_storm=$((n_storm + 1)) ;;
    # No state series yet (a snapshot before the first QoS evaluation): counted and reported, not a
    # write; once a state has been shown, it must be one of the two.
    "") if [ $((n_unknown + n_storm)) -eq 0 ]; then n_none=$((n_none + 1)); else bad="$bad none@$(since "$t0")s"; fi ;;
    *) bad="$bad $_st@$(since "$t0")s" ;;
  esac
  samples=$(metric_from "$TESTBED_WORK/w.txt" roce_exporter_samples_total)
  awk -v s="$samples" -v n=$window_samples -v t="$t0" -v w=$window_s '{ exit !(s + 0 >= n && $1 - t >= w) }' /proc/uptime
}
wait_for 60 window || log "the window did not complete within 60 s ($samples samples)"
window_len=$(since "$t0")
writes=$(simnic_dcb_sets_after "$sim" "$base")
phase=$(simnic_storm_phase "$sim" 3 tx)
log "window: ${window_len} s from the exporter's start, $samples samples, $n_scrapes scrapes:" \
  "no state yet $n_none, blocked_unknown_storm $n_unknown, blocked_storm $n_storm, other:${bad:- none}"
echo "ENFORCE_STORM_START window_s=$window_len samples=$samples dcb_writes_during_storm=$writes"
awk -v s="$samples" -v n=$window_samples 'BEGIN { exit !(s + 0 >= n) }' || fail "only $samples samples in the window"
assert_eq pausing "$phase" "the storm ran through the window"
exporter_alive
assert_eq 0 "$writes" "exporter DCB writes during the storm ($(tail -n 3 "$SIMNIC_DEBUGFS/$sim/dcb_events" | tr '\n' ';'))"
assert_eq "" "$(dscp26)" "DSCP 26 during the storm (written?)"
assert_eq "" "$(tos)" "ToS during the storm (written?)"
[ -z "$bad" ] || fail "states other than blocked_storm/blocked_unknown_storm during the storm:$bad"
num_eq 1 "$(metric_from "$TESTBED_WORK/w.txt" roce_pfc_storm netdev="$sim" prio=3 direction=tx)" ||
  fail "the exporter does not report the storm (roce_pfc_storm{prio=3,direction=tx})"
assert_eq blocked_storm "$(state_in "$TESTBED_WORK/w.txt")" "state at the end of the window"

# --- the storm ends: now the fix -------------------------------------------------------------------
stop_seq=$(simnic_dcb_event_seq "$sim")
t_stop=$(uptime_s)
simnic_ctl "$sim" "storm stop all"
fixed() { [ "$(dscp26)" = 3 ] && [ "$(tos)" = "Global tclass=106" ]; }
wait_for 30 fixed || fail "not fixed within 30 s of the storm's end: DSCP 26 '$(dscp26)', ToS '$(tos)'"
fix_after=$(since "$t_stop")
in_sync() { num_eq 1 "$(metric roce_qos_in_sync netdev="$sim")"; }
wait_for 10 in_sync || fail "not in sync after the fix"
after=$(simnic_dcb_sets_after "$sim" "$stop_seq")
total=$(simnic_dcb_sets_after "$sim" "$base")
log "fixed ${fix_after} s after the storm stopped; exporter DCB writes after the stop: $after, in all: $total"
echo "ENFORCE_STORM_START fixed_after_stop_s=$fix_after dcb_writes_after_stop=$after"
assert_eq "$total" "$after" "every exporter DCB write came after the storm stopped"
# One RTM_SETDCB: the APP entry (the DCB parts of one apply go out in one message; the ToS is sysfs).
assert_eq 1 "$after" "exporter DCB writes for the fix"
# The worker's counts reach /metrics with the snapshot after the one that shows the device in sync.
fixes() { metric roce_qos_remediations_total netdev="$sim" field="$1" result=success || echo 0; }
counted() { num_eq 1 "$(fixes dscp_prio)" && num_eq 1 "$(fixes roce_tos)"; }
wait_for 10 counted || true
assert_num_eq 1 "$(fixes dscp_prio)" "dscp_prio fixes"
assert_num_eq 1 "$(fixes roce_tos)" "roce_tos fixes"
stop_exporter
