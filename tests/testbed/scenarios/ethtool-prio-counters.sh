# shellcheck shell=sh
# Every per-priority ethtool counter the exporter reports equals `ethtool -S`; enabling PFC on a new
# priority with dcb makes its pause counters appear without a restart, disabling it makes them
# disappear, and the other counters stay correct throughout (a stale string-set index would shift
# values between names).
require exporter simnic

sim=$(simnic_netdevs | head -n1)
dcb pfc set dev "$sim" prio-pfc all:off 3:on || fail "dcb pfc set failed"

# Frozen, distinct values per counter: a value exported under the wrong name cannot match, and a
# frozen counter compares exactly.
give_distinct_values() {
  ethtool_prio_stats "$sim" | awk -v seed="$1" '{ printf "set %s %d\n", $1, NR * 1000003 + seed }' >"$TESTBED_WORK/cmds"
  simnic_ctl "$sim" "rate * 0"
  # The control file takes at most 4 KiB per write.
  while read -r a; do
    batch="$batch$a;"
    [ ${#batch} -lt 3500 ] && continue
    simnic_ctl "$sim" "$batch"
    batch=
  done <"$TESTBED_WORK/cmds"
  [ -z "$batch" ] || simnic_ctl "$sim" "$batch"
  batch=
}
# The exporter agrees when it exports the same names as ethtool -S, each with a value between
# ethtool's reads just before and just after the scrape: the values are frozen, but a packet the
# guest itself sends (a neighbour solicitation after a DCB change) still counts on tx_prio0, and
# under load the exporter's last sample can predate it. A value under a shifted name is off by
# about 1,000,003 and never fits.
agree() {
  ethtool_prio_stats "$sim" >"$TESTBED_WORK/before"
  scrape
  exported_ethtool_prio_counters "$METRICS" "$sim" >"$TESTBED_WORK/exported"
  ethtool_prio_stats "$sim" >"$TESTBED_WORK/oracle"
  awk 'FNR == 1 { file++ }
       file == 1 { low[$1] = $2; next }
       file == 2 { high[$1] = $2; names++; next }
       { exported++
         if (!($1 in low) || !($1 in high) || $2 + 0 < low[$1] + 0 || $2 + 0 > high[$1] + 0) bad = 1 }
       END { exit (bad || exported != names) }' \
    "$TESTBED_WORK/before" "$TESTBED_WORK/oracle" "$TESTBED_WORK/exported"
}
check() {
  wait_for 15 agree || {
    diff "$TESTBED_WORK/oracle" "$TESTBED_WORK/exported" | head -n 30 >&2
    fail "exported per-priority counters differ from ethtool -S ($1; - ethtool, + exporter)"
  }
  exporter_alive
  assert_no_negative "$METRICS"
  log "$(wc -l <"$TESTBED_WORK/oracle") counters agree ($1)"
}
has_pause() { ethtool_stats "$sim" | grep -q "^rx_prio$1_pause "; }

give_distinct_values 17
start_exporter
check "PFC on prio 3"
grep -q '^rx_prio3_pause ' "$TESTBED_WORK/exported" || fail "no rx_prio3_pause with PFC on 3"
pid=$EXPORTER_PID
changes0=$(metric_from "$METRICS" roce_ethtool_string_set_changes_total netdev="$sim") || changes0=

# PFC moved from priority 3 to 4: the set keeps its size, so GSTATS cannot tell; the DCB
# notification must make the exporter re-read the names at once, not at its 10 s re-validation.
count0=$(ethtool_stats "$sim" | wc -l)
dcb pfc set dev "$sim" prio-pfc 3:off 4:on || fail "dcb pfc set 3:off 4:on failed"
wait_for 10 has_pause 4 || fail "ethtool -S never showed rx_prio4_pause"
assert_eq "$count0" "$(ethtool_stats "$sim" | wc -l)" "ethtool -S count after moving PFC 3 -> 4"
give_distinct_values 23
wait_for 3 agree || {
  diff "$TESTBED_WORK/oracle" "$TESTBED_WORK/exported" | head -n 30 >&2
  fail "exported counters differ from ethtool -S 3 s after PFC moved 3 -> 4 (same count)"
}
log "PFC moved 3 -> 4 at the same count ($count0 lines): exporter agrees"
dcb pfc set dev "$sim" prio-pfc 4:off 3:on || fail "dcb pfc set 4:off 3:on failed"
wait_for 10 has_pause 3 || fail "ethtool -S never showed rx_prio3_pause again"
check "PFC back on prio 3"

dcb pfc set dev "$sim" prio-pfc 5:on || fail "dcb pfc set 5:on failed"
wait_for 10 has_pause 5 || fail "ethtool -S never showed rx_prio5_pause"
give_distinct_values 29
check "PFC on prio 3 and 5"
grep -q '^rx_prio5_pause ' "$TESTBED_WORK/exported" || fail "prio 5 pause counters did not appear"

dcb pfc set dev "$sim" prio-pfc 5:off || fail "dcb pfc set 5:off failed"
wait_for 10 eval '! has_pause 5' || fail "rx_prio5_pause stayed in ethtool -S"
give_distinct_values 41
check "PFC back to prio 3 only"
grep -q '^rx_prio5_pause' "$TESTBED_WORK/exported" && fail "prio 5 pause series stayed after PFC off"
grep -q '^rx_prio3_pause ' "$TESTBED_WORK/exported" || fail "prio 3 pause series vanished"
assert_eq "$pid" "$EXPORTER_PID" "exporter pid (no restart)"

if [ -n "$changes0" ]; then
  changes=$(metric_from "$METRICS" roce_ethtool_string_set_changes_total netdev="$sim")
  [ "$(awk -v a="$changes0" -v b="$changes" 'BEGIN { print b - a }')" -ge 2 ] ||
    fail "roce_ethtool_string_set_changes_total went $changes0 -> $changes over two string-set changes"
fi
stop_exporter
