#!/usr/bin/env bash
# Storm detection latency inside the exporter, over many storms at varied phases relative to the
# sampler: a host script of the testbed runner,
#
#   STORMS=20 PERIOD=250ms tests/testbed/run --host-script bench/testbed_storm_latency.sh
#
# Each storm is measured by tests/e2e/guest/storm-latency.sh (storm start -> the exporter's
# "PFC storm on ..." log line, guest clock); directions alternate, and a random 0..1 s pause before
# each start spreads the start over the sampler's phase. Prints one MEASURE line per storm and a
# summary (min/median/max against detection + one period). Fails if a storm is not detected, or
# not restored within 10 s after it stops.
set -euo pipefail
: "${TESTBED_GUEST_EXEC:?run through tests/testbed/run --host-script}"
root=$(cd "$(dirname "$0")/.." && pwd)
storms=${STORMS:-20}
period=${PERIOD:-250ms}
detection=${DETECTION:-200ms}
guest() { "$TESTBED_GUEST_EXEC" "$@"; }

guest "require exporter simnic; stop_exporter 2>/dev/null || true
  start_exporter --sampler.period=$period --storm.detection-time=$detection" >/dev/null
sim=$(guest 'simnic_netdevs | head -n1')
[[ -n "$sim" ]] || { echo "no simulated netdev in the guest" >&2; exit 1; }
guest "dcb pfc set dev $sim prio-pfc all:off 3:on
  simnic_ctl $sim 'storm stop all; traffic 3 rx 200000; traffic 3 tx 200000'"
log=$(guest 'echo $EXPORTER_LOG')

latencies=()
for ((i = 0; i < storms; i++)); do
  direction=$([[ $((i % 2)) == 0 ]] && echo rx || echo tx)
  sleep "0.$(printf '%03d' $((RANDOM % 1000)))"  # the phase relative to the sampler
  script=$(sed "s/prio=3 direction=rx/prio=3 direction=$direction/; s/storm start 3 rx/storm start 3 $direction/; s/prio 3 rx/prio 3 $direction/g" \
    "$root/tests/e2e/guest/storm-latency.sh")
  out=$({ echo "sim=$sim log=$log"; echo "$script"; } | guest) || {
    echo "storm $i ($direction) not detected: $out" >&2
    exit 1
  }
  read -r latency write_ms _ <<<"$(tail -n1 <<<"$out")"
  echo "MEASURE storm=$i direction=$direction latency_ms=$latency write_ms=$write_ms"
  latencies+=("$latency")
  guest "simnic_ctl $sim 'storm stop 3 $direction'
    f=\$TESTBED_WORK/restore.prom
    restored() { scrape \$f && [ \"\$(metric_from \$f roce_pfc_storm netdev=$sim prio=3 direction=$direction)\" = 0 ]; }
    wait_for 10 restored || fail 'storm not restored within 10 s'"
done

printf '%s\n' "${latencies[@]}" | sort -n | awk -v p="$period" -v d="$detection" '
  { v[NR] = $1 }
  END {
    ms = function_ms(p) + function_ms(d)
    printf "SUMMARY storms=%d period=%s detection=%s min_ms=%d median_ms=%d max_ms=%d goal_ms=%d\n",
      NR, p, d, v[1], v[int((NR + 1) / 2)], v[NR], ms
  }
  function function_ms(s) { return s ~ /ms$/ ? s + 0 : s * 1000 }'
