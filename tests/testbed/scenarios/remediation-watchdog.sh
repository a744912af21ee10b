# shellcheck shell=sh
# An apply longer than the systemd watchdog does not trip it (docs/remediation.md, guard 3).
# There is no systemd in the guest: watchdog_harness (tests/tools/) plays its part, with
# NOTIFY_SOCKET and WATCHDOG_USEC=10 s (the shipped WatchdogSec=10s), and SIGABRTs the exporter
# like systemd if no WATCHDOG=1 comes for 10 s after READY=1 or the last one. Every simnic DCB and
# ecn enable write takes 2.5 s (write_latency_ms), and the drift needs five of them (PFC, roce_np
# and roce_rp enable 3 and 4): 12.5 s of writes, more than the watchdog allows in one go. The
# pass budget (3 s) splits them over passes; the keepalives keep coming between passes.
require exporter simnic
HARNESS=/testbed/bin/watchdog_harness
[ -x "$HARNESS" ] || skip "watchdog_harness not built (cmake --build build --target watchdog_harness)"
sim=$(simnic_netdevs | sed -n 1p)
lat=/sys/module/simnic/parameters/write_latency_ms
[ -w "$lat" ] || skip "this simnic has no write_latency_ms parameter"
ecn_en() { cat /sys/class/net/"$sim"/ecn/roce_"$1"/enable/"$2"; }
set_enable() { echo "$3" >/sys/class/net/"$sim"/ecn/roce_"$1"/enable/"$2"; }
pfc3() { dcb pfc show dev "$sim" | sed -n 's/.* 3:\(o[nf]*\) .*/\1/p'; }

# The embedded default policy, and DCQCN on priority 4 as well.
echo 0 >"$lat"
dcb pfc set dev "$sim" prio-pfc all:off 3:on
dcb app add dev "$sim" dscp-prio 24:3 26:3 48:6
for p in 0 1 2 3 4 5 6 7; do
  set_enable np $p 0
  set_enable rp $p 0
done
echo 106 >/sys/class/infiniband/"$(ibdev_of "$sim")"/tc/1/traffic_class
sysctl -qw net.ipv4.tcp_ecn=1
policy=$TESTBED_WORK/policy.yaml
printf 'defaults:\n  dcqcn:\n    np: [3, 4]\n    rp: [3, 4]\n' >"$policy"
dcb pfc set dev "$sim" prio-pfc 3:off

watchdog_usec=10000000
status=$TESTBED_WORK/watchdog.status
echo 2500 >"$lat"
t0=$(cut -d' ' -f1 /proc/uptime)
"$HARNESS" --watchdog-usec=$watchdog_usec --status="$status" -- "$EXPORTER" \
  --web.listen-address=:"$EXPORTER_PORT" --collector.device-include="^$sim\$" \
  --remediation=enforce --remediation.backoff=1s --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
  --remediation.state-file="$TESTBED_WORK/remediation.json" \
  --remediation.lock-file="$TESTBED_WORK/enforce.lock" --config="$policy" >>"$EXPORTER_LOG" 2>&1 &
harness=$!
field() { sed -n "s/^$1 //p" "$status" 2>/dev/null; }
applied() {
  [ "$(pfc3)" = on ] && [ "$(ecn_en np 3)$(ecn_en np 4)$(ecn_en rp 3)$(ecn_en rp 4)" = 1111 ]
}
wait_for 90 applied || fail "the slow apply did not complete (pfc3=$(pfc3), watchdog: $(tr '\n' ' ' <"$status"))"
t1=$(cut -d' ' -f1 /proc/uptime)
in_sync() { num_eq 1 "$(metric roce_qos_in_sync netdev="$sim")"; }
wait_for 20 in_sync || fail "not in sync after the slow apply"
echo 0 >"$lat"
kill -TERM "$harness"
wait "$harness"
rc=$?
log "watchdog: $(tr '\n' ' ' <"$status"); apply took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s"
assert_eq 0 "$(field timeouts)" "watchdog timeouts"
[ "$rc" -eq 0 ] || fail "the exporter (under the harness) exited with $rc"
[ "$(field ready)" = 1 ] || fail "no READY=1"
# READY=1 follows the first pass (PFC and np 3); the two passes after it (np 4 + rp 3, then rp 4)
# each end with a keepalive.
awk -v k="$(field keepalives)" 'BEGIN { exit !(k >= 2) }' || fail "only $(field keepalives) keepalives"
awk -v g="$(field max_gap_ms)" -v w=$watchdog_usec 'BEGIN { exit !(g > 0 && g * 1000 < w) }' ||
  fail "longest gap between keepalives $(field max_gap_ms) ms, watchdog $((watchdog_usec / 1000)) ms"
# The setup is only a test if the writes together outlast the watchdog (by construction 12.5 s
# of simnic sleeps; this also counts the exporter's start, so it is a floor check).
awk -v a="$t0" -v b="$t1" -v w=$watchdog_usec 'BEGIN { exit !((b - a) * 1e6 > w) }' ||
  fail "the apply took less than the watchdog period: nothing was tested"
