# shellcheck shell=sh
# A slow device cannot stall the sampler (docs/remediation.md, "The watchdog cannot kill an apply"):
# the apply runs on its own thread with a deadline; the sampler, which feeds the systemd watchdog,
# never waits for it.
#  * watchdog_harness (tests/tools/) plays systemd: NOTIFY_SOCKET, WATCHDOG_USEC=10 s (the shipped
#    WatchdogSec=10s), SIGABRT to the exporter if no WATCHDOG=1 comes for 10 s;
#  * simnic made slow once the exporter runs in sync: every DCB set sleeps write_latency_ms (2.5 s,
#    RTNL held as the kernel holds it), every DCB query fw_qos_latency_us (50 ms: one IEEE_GET
#    makes four, 0.2 s under RTNL; at 0.25 s per query the guest's RTNL was held by back-to-back
#    IEEE_GETs long enough to stall the sampler's own netlink reads for 19.6 s, the kernel's doing,
#    not the apply's), and an ecn enable write hangs for ecn_write_latency_ms (22 s: longer than
#    the apply deadline and than WatchdogSec on its own, so a sampler that waited for it would be
#    SIGABRTed, and past the 7 s deadline long enough for 2 samples where the slowed guest
#    publishes one every 4-5 s, as the CI host's loaded testbed lane did);
#  * a drift made through the control file (no notification, no slow write by the scenario): PFC 3
#    and DCQCN NP on priority 3 off: one apply of a fresh read, the PFC write, the ecn write and
#    the verification read, about 27 s;
#  * while the apply is held: the state is blocked_apply_stuck, and roce_exporter_samples_total keeps
#    rising (at least 2 more samples published within one uninterrupted run of scrapes that all say
#    the apply is stuck);
#  * the apply completes (dcb and sysfs read the policy's values, in sync), no watchdog expiry, the
#    longest gap between keepalives stays under 10 s (printed as REMEDIATION_DEADLINE max_gap_ms).
require exporter simnic
HARNESS=/testbed/bin/watchdog_harness
[ -x "$HARNESS" ] || skip "watchdog_harness not built (cmake --build build --target watchdog_harness)"
sim=$(simnic_netdevs | sed -n 1p)
lat=/sys/module/simnic/parameters/write_latency_ms
qlat=/sys/module/simnic/parameters/fw_qos_latency_us
ecn_lat=/sys/module/simnic/parameters/ecn_write_latency_ms
if ! [ -w "$lat" ] || ! [ -w "$qlat" ] || ! [ -w "$ecn_lat" ]; then
  skip "this simnic has no write_latency_ms / ecn_write_latency_ms / fw_qos_latency_us parameters"
fi
ibdev=$(ibdev_of "$sim")
write_ms=2500
ecn_write_ms=22000
query_us=50000
watchdog_usec=10000000
stuck_samples=2

policy=$TESTBED_WORK/policy.yaml
"$EXPORTER" policy show-default >"$policy" || fail "policy show-default failed"
echo 0 >"$lat"
echo 0 >"$ecn_lat"
echo 0 >"$qlat"
simnic_conform_default_policy "$sim" "$ibdev"

pfc3() { dcb pfc show dev "$sim" | sed -n 's/.* 3:\(o[nf]*\) .*/\1/p'; }
ecn_en() { cat /sys/class/net/"$sim"/ecn/roce_"$1"/enable/"$2"; }
state_in() {
  _metric_lines "$1" | awk -v nd="$sim" "$_AWK_LABELS"'
    $1 == "roce_qos_remediation_state" && L["netdev"] == nd && $NF + 0 == 1 { print L["state"] }'
}
status=$TESTBED_WORK/watchdog.status
field() { sed -n "s/^$1 //p" "$status" 2>/dev/null; }
since() { awk -v t="$1" '{ printf "%.1f", $1 - t }' /proc/uptime; }
# Fails with what the harness saw (an expired watchdog SIGABRTs the exporter) and the log's tail.
gone_fail() {
  tail -n 15 "$EXPORTER_LOG" >&2
  fail "$1; watchdog: $(tr '\n' ' ' <"$status" 2>/dev/null)"
}
hscrape() {
  kill -0 "$harness" 2>/dev/null || gone_fail "the exporter (under the harness) is gone"
  timeout 30 wget -q -O "$1" "$EXPORTER_URL/metrics" 2>/dev/null || gone_fail "GET /metrics failed"
}

"$HARNESS" --watchdog-usec=$watchdog_usec --status="$status" -- "$EXPORTER" \
  --web.listen-address=:"$EXPORTER_PORT" --collector.device-include="^$sim\$" \
  --remediation=enforce --remediation.backoff=1s --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
  --remediation.state-file="$TESTBED_WORK/remediation.json" \
  --remediation.lock-file="$TESTBED_WORK/enforce.lock" --config="$policy" >>"$EXPORTER_LOG" 2>&1 &
harness=$!
ready() { kill -0 "$harness" 2>/dev/null && timeout 30 wget -q -O /dev/null "$EXPORTER_URL/-/ready" 2>/dev/null; }
wait_for 30 ready || fail "the exporter under the harness did not get ready: $(tail -n 5 "$EXPORTER_LOG")"
in_sync() { num_eq 1 "$(metric roce_qos_in_sync netdev="$sim")"; }
wait_for 20 in_sync || fail "$sim not in sync at start"

echo $write_ms >"$lat"
echo $ecn_write_ms >"$ecn_lat"
echo $query_us >"$qlat"
t0=$(cut -d' ' -f1 /proc/uptime)
simnic_ctl "$sim" "pfc 0x00; ecn np 3 0"
log "drift made (PFC 3 and DCQCN NP 3 off); DCB writes ${write_ms} ms, ecn writes ${ecn_write_ms} ms, DCB queries ${query_us} us"

# The apply is held past its deadline; from the first scrape that says so, the sampler publishes
# $stuck_samples more samples while every scrape still says so.
stuck_at=
stuck_seen=0
last_seen=
last_change=$t0
dumped=
held() {
  hscrape "$TESTBED_WORK/h.txt"
  _s=$(metric_from "$TESTBED_WORK/h.txt" roce_exporter_samples_total)
  _st=$(state_in "$TESTBED_WORK/h.txt")
  if [ "$_s $_st" != "$last_seen" ]; then
    log "t+$(since "$t0") s: sample $_s, state ${_st:-none}"
    last_seen="$_s $_st"
    last_change=$(cut -d' ' -f1 /proc/uptime)
  elif [ -z "$dumped" ] && awk -v t="$last_change" '{ exit !($1 - t > 5) }' /proc/uptime; then
    dumped=1 # no sample for 5 s: where the exporter's threads wait, for the report
    for _t in /proc/"$(cut -d' ' -f1 /proc/"$harness"/task/"$harness"/children 2>/dev/null)"/task/*; do
      log "no sample for 5 s: thread $(cat "$_t"/comm 2>/dev/null) state $(awk '{ print $3 }' "$_t"/stat 2>/dev/null) wchan $(cat "$_t"/wchan 2>/dev/null) $(tr '\n' ' ' <"$_t"/stack 2>/dev/null | cut -c1-300)"
    done
  fi
  if [ "$_st" != blocked_apply_stuck ]; then
    stuck_at= # the samples must come within one stuck episode
    return 1
  fi
  if [ -z "$stuck_at" ]; then
    stuck_at=$_s
    log "blocked_apply_stuck from $(since "$t0") s after the drift, sample $_s"
  fi
  stuck_seen=$(awk -v a="$_s" -v b="$stuck_at" 'BEGIN { print a - b }')
  [ "$stuck_seen" -ge $stuck_samples ]
}
wait_for 90 held || gone_fail "no $stuck_samples samples published within one blocked_apply_stuck episode (last one from sample ${stuck_at:-never}, $stuck_seen more; state now $(state_in "$TESTBED_WORK/h.txt"))"
log "$stuck_seen samples published while the apply was stuck ($(since "$t0") s after the drift)"

# Polled through the control file: a `dcb` read would take RTNL for 1.6 s at every try and
# starve the exporter's own reads; `dcb` confirms once the latencies are off.
applied() { [ "$(simnic_state "$sim" pfc_en)" = 0x08 ] && [ "$(ecn_en np 3)" = 1 ]; }
wait_for 120 applied || gone_fail "the slow apply did not complete (pfc_en=$(simnic_state "$sim" pfc_en), np3=$(ecn_en np 3))"
applied_after=$(since "$t0")
echo 0 >"$lat"
echo 0 >"$ecn_lat"
echo 0 >"$qlat"
assert_eq on "$(pfc3)" "PFC 3 after the apply (dcb)"
wait_for 20 in_sync || fail "not in sync after the slow apply"
not_stuck() { hscrape "$TESTBED_WORK/h.txt" && [ "$(state_in "$TESTBED_WORK/h.txt")" != blocked_apply_stuck ]; }
wait_for 20 not_stuck || fail "still blocked_apply_stuck after the apply completed"
kill -TERM "$harness"
wait "$harness"
rc=$?
log "watchdog: $(tr '\n' ' ' <"$status"); the apply completed ${applied_after} s after the drift"
echo "REMEDIATION_DEADLINE max_gap_ms=$(field max_gap_ms) keepalives=$(field keepalives) applied_after_s=$applied_after stuck_samples=$stuck_seen"
assert_eq 0 "$(field timeouts)" "watchdog timeouts"
[ "$rc" -eq 0 ] || fail "the exporter (under the harness) exited with $rc"
awk -v g="$(field max_gap_ms)" -v w=$watchdog_usec 'BEGIN { exit !(g > 0 && g * 1000 < w) }' ||
  fail "longest gap between keepalives $(field max_gap_ms) ms, watchdog $((watchdog_usec / 1000)) ms"
