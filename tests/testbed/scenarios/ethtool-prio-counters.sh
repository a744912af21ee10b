# Every per-priority ethtool counter the exporter reports equals `ethtool -S`; enabling PFC on a new
# priority with dcb makes its pause counters appear without a restart, disabling it makes them
# disappear, and the other counters stay correct throughout (a stale string-set index would shift
# values between names).
require exporter simnic

sim=$(simnic_netdevs | head -n1)
dcb pfc set dev "$sim" prio-pfc all:off 3:on || fail "dcb pfc set failed"

# Distinct values per counter so that a value exported under the wrong name cannot match.
give_distinct_values() {
  i=0
  for c in $(ethtool_stats "$sim" | awk '$1 ~ /^(rx|tx)_prio[0-7]_|^tx_pause_storm_/ { print $1 }'); do
    i=$((i + 1))
    simnic_ctl "$sim" "rate $c 0; set $c $((i * 1000003 + 17))"
  done
}

# The ethtool name behind an exported series ("family labels"), per the metric catalogue.
ethtool_name_of() { # FAMILY LABELS(k=v,k=v)
  _l=",$2,"
  _prio=$(echo "$_l" | sed -n 's/.*,prio=\([0-7]\),.*/\1/p')
  _tc=$(echo "$_l" | sed -n 's/.*,tc=\([0-7]\),.*/\1/p')
  _dir=$(echo "$_l" | sed -nE 's/.*,direction=(rx|tx),.*/\1/p')
  case $1 in
    roce_pfc_pause_frames_total) echo "${_dir}_prio${_prio}_pause" ;;
    roce_pfc_pause_duration_seconds_total) echo "${_dir}_prio${_prio}_pause_duration" ;;
    roce_pfc_pause_transitions_total) echo "rx_prio${_prio}_pause_transition" ;;
    roce_prio_packets_total) echo "${_dir}_prio${_prio}_packets" ;;
    roce_prio_bytes_total) echo "${_dir}_prio${_prio}_bytes" ;;
    roce_prio_discards_total) echo "rx_prio${_prio}_discards" ;;
    roce_tc_discards_total)
      case $_l in *,reason=buffer,*) echo "rx_prio${_tc}_buf_discard" ;; *) echo "rx_prio${_tc}_cong_discard" ;; esac ;;
    roce_tc_ecn_marked_packets_total) echo "rx_prio${_tc}_marked" ;;
    roce_pause_storm_events_total)
      case $_l in *,severity=warning,*) echo tx_pause_storm_warning_events ;; *) echo tx_pause_storm_error_events ;; esac ;;
  esac
}
families="roce_pfc_pause_frames_total roce_pfc_pause_duration_seconds_total roce_pfc_pause_transitions_total
  roce_prio_packets_total roce_prio_bytes_total roce_prio_discards_total roce_tc_discards_total
  roce_tc_ecn_marked_packets_total roce_pause_storm_events_total"

# Exported per-priority series of $sim, one "ethtool_name value" line each (durations back in µs).
exported_as_ethtool() {
  scrape "$TESTBED_WORK/m"
  for f in $families; do
    metric_series "$TESTBED_WORK/m" "$f" | while read -r labels value; do
      case ",$labels," in *",netdev=$sim,"*) ;; *) continue ;; esac
      name=$(ethtool_name_of "$f" "$labels")
      case $f in
        *_seconds_total) value=$(awk -v v="$value" 'BEGIN { printf "%.0f", v * 1000000 }') ;;
      esac
      echo "$name $value"
    done
  done | sort
}
oracle() { ethtool_stats "$sim" | awk '$1 ~ /^(rx|tx)_prio[0-7]_|^tx_pause_storm_/' | sort; }
agree() {
  exported_as_ethtool >"$TESTBED_WORK/exported"
  oracle >"$TESTBED_WORK/oracle"
  cmp -s "$TESTBED_WORK/exported" "$TESTBED_WORK/oracle"
}
check() {
  wait_for 10 agree || {
    diff "$TESTBED_WORK/oracle" "$TESTBED_WORK/exported" | head -n 30 >&2
    fail "exported per-priority counters differ from ethtool -S ($1; < ethtool, > exporter)"
  }
  exporter_alive
  assert_no_negative "$TESTBED_WORK/m"
}

give_distinct_values
start_exporter
check "PFC on prio 3"
grep -q '^rx_prio3_pause ' "$TESTBED_WORK/oracle" || fail "ethtool -S has no rx_prio3_pause with PFC on 3"
changes0=$(metric_from "$TESTBED_WORK/m" roce_ethtool_string_set_changes_total netdev="$sim") || changes0=

dcb pfc set dev "$sim" prio-pfc 5:on || fail "dcb pfc set 5:on failed"
wait_for 10 sh -c "$ETHTOOL -S $sim | grep -q rx_prio5_pause:" || fail "ethtool -S never showed rx_prio5_pause"
give_distinct_values
check "PFC on prio 3 and 5"
grep -q '^rx_prio5_pause ' "$TESTBED_WORK/exported" || fail "prio 5 pause counters did not appear"

dcb pfc set dev "$sim" prio-pfc 5:off || fail "dcb pfc set 5:off failed"
wait_for 10 sh -c "! $ETHTOOL -S $sim | grep -q rx_prio5_pause:" || fail "rx_prio5_pause stayed in ethtool -S"
give_distinct_values
check "PFC back to prio 3 only"
grep -q '^rx_prio5_pause' "$TESTBED_WORK/exported" && fail "prio 5 pause series stayed after PFC off"
grep -q '^rx_prio3_pause ' "$TESTBED_WORK/exported" || fail "prio 3 pause series vanished"

if [ -n "$changes0" ]; then
  changes=$(metric_from "$TESTBED_WORK/m" roce_ethtool_string_set_changes_total netdev="$sim")
  [ "$(awk -v a="$changes0" -v b="$changes" 'BEGIN { print b - a }')" -ge 2 ] ||
    fail "roce_ethtool_string_set_changes_total went $changes0 -> $changes over two string-set changes"
fi
stop_exporter
