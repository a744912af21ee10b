# Guest side of the e2e storm scenario (fed to tests/testbed/guest-exec on stdin by alerting.sh,
# which prepends `sim=<netdev>`): starts a simnic PFC storm on priority 3 (rx) and polls /metrics
# until the exporter's snapshot shows roce_pfc_storm = 1. Prints "LATENCY_MS WRITE_MS": the
# snapshot's publish time (roce_exporter_last_sample_timestamp_seconds) minus the time just before
# the storm was started, and how long starting it took (the uncertainty of the start).
# busybox date has no %N; adjtimex reads the same CLOCK_REALTIME with microseconds.
now_s() { busybox adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d.%06d", s, u }'; }
f=$TESTBED_WORK/storm.prom
stormed() {
  scrape "$f" && [ "$(metric_from "$f" roce_pfc_storm netdev="$sim" prio=3 direction=rx)" = 1 ]
}
stormed && fail "roce_pfc_storm is already 1 before the storm"
t0=$(now_s)
simnic_ctl "$sim" "storm start 3 rx"
t1=$(now_s)
wait_for 10 stormed || fail "roce_pfc_storm never became 1"
ts=$(awk '$1 == "roce_exporter_last_sample_timestamp_seconds" { print $2 }' "$f")
[ -n "$ts" ] || fail "no roce_exporter_last_sample_timestamp_seconds in the scrape"
awk -v a="$t0" -v b="$t1" -v s="$ts" 'BEGIN { printf "%.0f %.0f\n", (s - a) * 1000, (b - a) * 1000 }'
