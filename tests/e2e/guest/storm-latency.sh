# Guest side of the e2e storm scenario (fed to tests/testbed/guest-exec on stdin by alerting.sh,
# which prepends `sim=<netdev>` and `log=<exporter log>`): starts a simnic PFC storm on priority 3
# (rx), waits until /metrics shows roce_pfc_storm = 1, and prints "LATENCY_MS WRITE_MS POLL_MS":
#   LATENCY_MS  storm start -> the exporter's state change, from the time stamp of its
#               "PFC storm on <netdev> prio 3 rx" log line (written on the sampler thread while it
#               builds the snapshot that carries roce_pfc_storm = 1);
#   WRITE_MS    how long starting the storm took (the uncertainty of the start time);
#   POLL_MS     storm start -> the publish time of the snapshot seen by the first scrape showing 1
#               (an upper bound that includes the polling delay of this script).
# busybox date has no %N; adjtimex reads the same CLOCK_REALTIME with microseconds.
now_s() { busybox adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d.%06d", s, u }'; }
f=$TESTBED_WORK/storm.prom
stormed() {
  scrape "$f" && [ "$(metric_from "$f" roce_pfc_storm netdev="$sim" prio=3 direction=rx)" = 1 ]
}
stormed && fail "roce_pfc_storm is already 1 before the storm"
pat="msg=\"PFC storm\" netdev=$sim prio=3 direction=rx "
before=$(grep -c "$pat" "$log")
t0=$(now_s)
simnic_ctl "$sim" "storm start 3 rx"
t1=$(now_s)
wait_for 10 stormed || fail "roce_pfc_storm never became 1"
ts=$(awk '$1 == "roce_exporter_last_sample_timestamp_seconds" { print $2 }' "$f")
[ -n "$ts" ] || fail "no roce_exporter_last_sample_timestamp_seconds in the scrape"
line=$(grep "$pat" "$log" | tail -n1)
[ "$(grep -c "$pat" "$log")" -gt "$before" ] || fail "no storm log line"
# ts=YYYY-MM-DDTHH:MM:SS.mmmZ (logfmt, UTC): seconds of the day, compared with t0's.
echo "$line" | awk -v a="$t0" -v b="$t1" -v s="$ts" '{
  match($0, /T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+Z/)
  split(substr($0, RSTART + 1, RLENGTH - 2), hms, ":")
  sod = hms[1] * 3600 + hms[2] * 60 + hms[3]
  d = sod - (a % 86400); if (d < -43200) d += 86400
  printf "%.0f %.0f %.0f\n", d * 1000, (b - a) * 1000, (s - a) * 1000
}'
