# shellcheck shell=sh
# Device removal and return under a running exporter: `rmmod simnic` makes every series of its
# netdevs and RDMA devices disappear (no stale series), Soft-RoCE's stay; loading it again brings
# them back with the new device's values (not the old ones), and nothing crashes or goes negative,
# also while /metrics is scraped continuously and across repeated removals. Then the same for
# Soft-RoCE: `rdma link del rxe0` / `rdma link add`.
require exporter simnic rxe

sim=$(simnic_netdevs | head -n1)
mlx=$(rdma_links | awk -v nd="$sim" '$2 == nd { print $1; exit }')
[ -n "$mlx" ] || fail "no RDMA link on $sim"
dev=${mlx%/*}
# Large values before removal: after the reload the device starts from zero, so a stale value
# would stand out.
simnic_ctl "$sim" "set rx_prio0_bytes 900000000000; set tx_prio0_packets 800000000; rate * 0"
simnic_ctl "$sim" "set np_cnp_sent 700000"

start_exporter
present() {
  scrape "$TESTBED_WORK/m"
  metric_from "$TESTBED_WORK/m" roce_prio_bytes_total netdev="$sim" prio=0 direction=rx >/dev/null &&
    metric_from "$TESTBED_WORK/m" roce_cnp_sent_total device="$dev" >/dev/null &&
    metric_from "$TESTBED_WORK/m" roce_device_info device="$dev" >/dev/null
}
gone() {
  scrape "$TESTBED_WORK/m"
  [ "$(series_count "$TESTBED_WORK/m" "netdev=\"$sim\"|device=\"$dev\"")" -eq 0 ]
}
rxe_present() { metric_from "$TESTBED_WORK/m" roce_device_info device=rxe0 >/dev/null; }
wait_for 10 present || fail "series of $sim/$dev never appeared"
assert_num_eq 900000000000 "$(metric_from "$TESTBED_WORK/m" roce_prio_bytes_total netdev="$sim" prio=0 direction=rx)" \
  "rx prio0 bytes before removal"

# Scrape continuously while devices come and go: every scrape must succeed.
(
  n=0
  while :; do
    wget -q -O "$TESTBED_WORK/bg.m" "$EXPORTER_URL/metrics" || { echo "scrape $n failed" >"$TESTBED_WORK/bg.fail"; exit 1; }
    n=$((n + 1))
    sleep 0.1 # pacing only: about ten scrapes a second, leaving CPU to the exporter
  done
) &
scraper=$!

for round in 1 2 3; do
  rmmod simnic || fail "rmmod simnic failed (round $round)"
  wait_for 10 gone || {
    grep -E "netdev=\"$sim\"|device=\"$dev\"" "$TESTBED_WORK/m" | head >&2
    fail "series of $sim/$dev stayed after rmmod (round $round)"
  }
  rxe_present || fail "rxe0 vanished with simnic (round $round)"
  assert_no_negative "$TESTBED_WORK/m"
  exporter_alive

  modprobe simnic $TESTBED_SIMNIC_PARAMS || fail "modprobe simnic failed (round $round)"
  for d in $(simnic_netdevs); do ip link set "$d" up; done
  simnic_ctl "$sim" "rate * 0"
  wait_for 10 present || fail "series of $sim/$dev did not come back (round $round)"
  # The new device's values, read by the tool, not the removed device's.
  fresh() {
    scrape "$TESTBED_WORK/m"
    num_eq "$(ethtool_stat "$sim" rx_prio0_bytes)" \
      "$(metric_from "$TESTBED_WORK/m" roce_prio_bytes_total netdev="$sim" prio=0 direction=rx)" &&
      num_eq "$(rdma_counter "$mlx" np_cnp_sent)" "$(metric_from "$TESTBED_WORK/m" roce_cnp_sent_total device="$dev" port="${mlx#*/}")"
  }
  wait_for 10 fresh || fail "after reload the exporter reports $(metric_from "$TESTBED_WORK/m" roce_prio_bytes_total netdev="$sim" prio=0 direction=rx) rx prio0 bytes, ethtool $(ethtool_stat "$sim" rx_prio0_bytes) (round $round)"
  assert_no_negative "$TESTBED_WORK/m"
  kill -0 "$scraper" 2>/dev/null || fail "continuous scrape stopped: $(cat "$TESTBED_WORK/bg.fail" 2>/dev/null)"
  log "round $round: $sim/$dev series went away with the module and came back with fresh values"
done
# The same for the other RDMA driver: Soft-RoCE's link removed and added back.
rxe_gone() {
  scrape "$TESTBED_WORK/m"
  [ "$(series_count "$TESTBED_WORK/m" 'device="rxe0"')" -eq 0 ]
}
rxe_back() {
  scrape "$TESTBED_WORK/m"
  rxe_present && num_eq "$(rdma_counter rxe0/1 sent_pkts)" \
    "$(exported_rdma_counters "$TESTBED_WORK/m" rxe0/1 | awk '$1 == "sent_pkts" { print $2 }')"
}
rdma link del rxe0 || fail "rdma link del rxe0"
wait_for 10 rxe_gone || fail "rxe0 series stayed after rdma link del"
metric_from "$TESTBED_WORK/m" roce_device_info device="$dev" >/dev/null || fail "$dev vanished with rxe0"
rdma link add rxe0 type rxe netdev veth0 || fail "rdma link add rxe0"
wait_for 10 rxe_back || fail "rxe0 did not come back with its new counters"
assert_no_negative "$TESTBED_WORK/m"
log "rxe0 series went away with the link and came back"

kill "$scraper"
wait "$scraper" 2>/dev/null
[ ! -e "$TESTBED_WORK/bg.fail" ] || fail "$(cat "$TESTBED_WORK/bg.fail")"
exporter_alive
stop_exporter
