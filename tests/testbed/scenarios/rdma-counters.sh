# shellcheck shell=sh
# Every RDMA hw counter the exporter reports equals `rdma statistic show link` for the same port,
# for the simulated ConnectX (mlx5 counter names) and Soft-RoCE rxe0 (its own names), with
# traffic running. Moving counters cannot be compared exactly (the exporter serves its last
# 250 ms sample), so: while traffic runs the exporter's values must move; then traffic stops
# (simnic rates set to 0, rping finished) and every value must equal the tool's exactly.
require exporter simnic rxe

sim=$(simnic_netdevs | head -n1)
mlx=$(rdma_links | awk -v nd="$sim" '$2 == nd { print $1; exit }')
[ -n "$mlx" ] || fail "no RDMA link on $sim in rdma link show"
# Distinct rates per counter, so a value exported under the wrong name cannot match by chance.
rates=$(rdma_counters "$mlx" | awk '{ printf "rate %s %d;", $1, NR * 37 + 11 }')
n_mlx=$(rdma_counters "$mlx" | wc -l)
[ "$n_mlx" -ge 20 ] || fail "$mlx has only $n_mlx hw counters"
simnic_ctl "$sim" "$rates"

start_exporter
value_of() { exported_rdma_counters "$METRICS" "$1" | awk -v n="$2" '$1 == n { print $2 }'; }
scrape
v1=$(value_of "$mlx" np_cnp_sent)
[ -n "$v1" ] || fail "no roce_cnp_sent_total for $mlx"
r1=$(value_of rxe0/1 sent_pkts)
[ -n "$r1" ] || fail "no sent_pkts counter for rxe0"
grows() { # PORT COUNTER OLD
  scrape
  [ "$(awk -v a="$3" -v b="$(value_of "$1" "$2")" 'BEGIN { print (b > a) }')" = 1 ]
}
wait_for 10 grows "$mlx" np_cnp_sent "$v1" || fail "roce_cnp_sent_total of $mlx does not follow the running counter ($v1)"
rxe_traffic 50
wait_for 10 grows rxe0/1 sent_pkts "$r1" || fail "rxe0 sent_pkts in the exporter did not move with traffic ($r1)"

# Freeze, then compare everything. rping has finished, so rxe0 is idle too.
simnic_ctl "$sim" "rate * 0"
agree() {
  scrape
  : >"$TESTBED_WORK/diff"
  for port in "$mlx" rxe0/1; do
    exported_rdma_counters "$METRICS" "$port" >"$TESTBED_WORK/exported"
    rdma_counters "$port" | sort >"$TESTBED_WORK/oracle"
    cmp -s "$TESTBED_WORK/exported" "$TESTBED_WORK/oracle" ||
      diff "$TESTBED_WORK/oracle" "$TESTBED_WORK/exported" | sed "s|^|$port |" >>"$TESTBED_WORK/diff"
  done
  [ ! -s "$TESTBED_WORK/diff" ]
}
wait_for 15 agree || { head -n 30 "$TESTBED_WORK/diff" >&2; fail "exported RDMA counters differ from rdma statistic (- rdma, + exporter)"; }
log "$n_mlx counters of $mlx and $(rdma_counters rxe0/1 | wc -l) of rxe0/1 agree"

# Optional hw counters (rdma_stat_desc, 5.16+): enabled with rdma, one is exported like the others
# without a restart. Before 5.16 the kernel has none: the tool's set fails and the exporter's set
# is the one above without them (docs/kernels.md).
if kernel_at_least 5.16; then
  rdma statistic set link "$mlx" optional-counters cc_rx_ce_pkts || fail "rdma could not enable cc_rx_ce_pkts"
  simnic_ctl "$sim" "set cc_rx_ce_pkts 4242"
  # No traffic now: the port is idle, and an idle port's RDMA counters are read every 30 s
  # (exporter/sampling/port_scheduler.h, kRdmaRefresh), so the new counter shows within that.
  wait_for 45 agree || { head -n 30 "$TESTBED_WORK/diff" >&2; fail "with cc_rx_ce_pkts enabled, exported RDMA counters differ (- rdma, + exporter)"; }
  assert_eq 4242 "$(value_of "$mlx" cc_rx_ce_pkts)" "exported optional counter cc_rx_ce_pkts"
else
  rdma statistic set link "$mlx" optional-counters cc_rx_ce_pkts 2>/dev/null &&
    fail "kernel $(uname -r) accepted an optional counter"
  assert_eq "" "$(value_of "$mlx" cc_rx_ce_pkts)" "cc_rx_ce_pkts before 5.16"
fi
errors=$(awk '/^roce_exporter_collect_errors_total/ { s += $NF } END { print s + 0 }' "$METRICS")
assert_eq 0 "$errors" "collect errors (sum of roce_exporter_collect_errors_total)"
assert_no_negative "$METRICS"
exporter_alive
stop_exporter
