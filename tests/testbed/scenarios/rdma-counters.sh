# Every RDMA hw counter the exporter reports equals `rdma statistic show link` for the same port,
# for the simulated ConnectX (mlx5 counter names) and Soft-RoCE rxe0 (its own names), with
# traffic running. Moving counters cannot be compared exactly (the exporter serves its last
# 250 ms sample), so: while traffic runs, the exporter's values must move; then traffic is
# stopped (simnic rates set to 0, rping finished) and every value must equal the tool's exactly.
require exporter simnic rxe

sim=$(simnic_netdevs | head -n1)
mlx=$(rdma_links | awk -v nd="$sim" '$2 == nd { print $1; exit }')
[ -n "$mlx" ] || fail "no RDMA link on $sim in rdma link show"
# Distinct rates per counter, so a value exported under the wrong name cannot match by chance.
i=0
for c in $(rdma_counters "$mlx" | awk '{ print $1 }'); do
  i=$((i + 1))
  simnic_ctl "$sim" "rate $c $((i * 37 + 11))"
done
[ "$i" -ge 20 ] || fail "$mlx has only $i hw counters"

start_exporter
rxe_traffic 50

exported() { # PORT COUNTER FILE -> value the exporter reports
  set -- "$1" "$2" "$3" $(rdma_metric_for "$2")
  metric_from "$3" "$4" device="${1%/*}" port="${1#*/}" $5
}
scrape "$TESTBED_WORK/m1"
v1=$(exported "$mlx" np_cnp_sent "$TESTBED_WORK/m1") || fail "no roce_cnp_sent_total for $mlx"
r1=$(exported rxe0/1 sent_pkts "$TESTBED_WORK/m1") || fail "no sent_pkts counter for rxe0"
moved() {
  scrape "$TESTBED_WORK/m2"
  v2=$(exported "$mlx" np_cnp_sent "$TESTBED_WORK/m2")
  [ "$(awk -v a="$v1" -v b="$v2" 'BEGIN { print (b > a) }')" = 1 ]
}
wait_for 5 moved || fail "roce_cnp_sent_total of $mlx does not follow the running counter ($v1)"
rxe_traffic 50
rxe_moved() {
  scrape "$TESTBED_WORK/m2"
  r2=$(exported rxe0/1 sent_pkts "$TESTBED_WORK/m2")
  [ "$(awk -v a="$r1" -v b="$r2" 'BEGIN { print (b > a) }')" = 1 ]
}
wait_for 5 rxe_moved || fail "rxe0 sent_pkts in the exporter did not move with traffic ($r1)"

# Freeze, then compare everything. rping has finished, so rxe0 is idle too.
simnic_ctl "$sim" "rate * 0"
all_equal() {
  : >"$TESTBED_WORK/diff"
  scrape "$TESTBED_WORK/m3"
  for port in "$mlx" rxe0/1; do
    rdma_counters "$port" >"$TESTBED_WORK/oracle"
    while read -r name value; do
      got=$(exported "$port" "$name" "$TESTBED_WORK/m3") || got=missing
      num_eq "$value" "$got" || echo "$port $name: rdma says $value, exporter $got" >>"$TESTBED_WORK/diff"
    done <"$TESTBED_WORK/oracle"
  done
  [ ! -s "$TESTBED_WORK/diff" ]
}
wait_for 10 all_equal || { cat "$TESTBED_WORK/diff" >&2; fail "exported RDMA counters differ from rdma statistic"; }

# Nothing the exporter reports for these ports is unknown to rdma statistic.
for port in "$mlx" rxe0/1; do
  n_tool=$(rdma_counters "$port" | wc -l)
  n_exp=$(grep -v '^#' "$TESTBED_WORK/m3" | grep -E '^roce_(cnp_sent|cnp_handled|cnp_ignored|ecn_marked_packets|rdma_hw_counter)_total\{' |
    grep "device=\"${port%/*}\"" | grep -c "port=\"${port#*/}\"")
  assert_eq "$n_tool" "$n_exp" "number of RDMA counters exported for $port"
done
assert_no_negative "$TESTBED_WORK/m3"
exporter_alive
stop_exporter
