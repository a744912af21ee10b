# shellcheck shell=sh
# `roce_qos_exporter capture` on simnic + rxe0, and the outputs of the live run it must reproduce
# (docs/capture.md). The scenario runs the daemon and `check --json` live, takes a capture of the
# same, unchanged state, checks in the guest that `--replay` gives the same check report, and
# prints the files between @@FILE/@@END markers (gzip + base64, with their sha256) for
# tests/testbed/capture-fixtures to copy into tests/fixtures/replay/<kernel>/.
require exporter simnic
set -- $(simnic_netdevs)
sim=$1
# A recognisable, partly drifting state: PFC on priority 3 and one DSCP entry on the first port,
# defaults on the others; distinct frozen counter values so a shifted index would show.
dcb pfc set dev "$sim" prio-pfc all:off 3:on || fail "dcb pfc set"
dcb app add dev "$sim" dscp-prio 26:3 || fail "dcb app add"
simnic_ctl "$sim" "set rx_prio3_pause 1234"
simnic_ctl "$sim" "set tx_prio3_pause 567"
# No IPv6 on the simnic ports: router solicitations would move their tx counters between the
# capture run's reads and its /metrics, which the replay test compares value for value.
for dev in $(simnic_netdevs); do echo 1 >"/proc/sys/net/ipv6/conf/$dev/disable_ipv6"; done

start_exporter --sampler.period=250ms
# The derived ECN signals need RDMA counters from two samples; the replay test compares its series
# with these, after samples spanning 6 s, so the live scrape waits for them too.
complete() {
  scrape && grep -q '^roce_pfc_pause_frames_total{.*prio="3"' "$METRICS" &&
    grep -q '^roce_ecn_silent{' "$METRICS" && grep -q '^roce_cnp_to_ecn_ratio{' "$METRICS"
}
wait_for 20 complete || fail "the exporter never showed prio 3's pause counters and the ECN signals"
scrape "$TESTBED_WORK/live.metrics"
stop_exporter

# A bundle holds no GID check (docs/gids.md: off under --replay and in capture), so the live report
# the replay must reproduce leaves it out too.
"$EXPORTER" --gids.interval=0 check --json >"$TESTBED_WORK/live.check.json" \
  2>"$TESTBED_WORK/live.check.err"
echo $? >"$TESTBED_WORK/live.check.exit"
log "live check exit $(cat "$TESTBED_WORK/live.check.exit")"

"$EXPORTER" capture --output "$TESTBED_WORK/bundle.txt" --sampler.period=250ms ||
  fail "capture failed"
head -c 17 "$TESTBED_WORK/bundle.txt" | grep -q '^roce-qos-capture' || fail "not a bundle"
# Nothing secret: the link dump keeps no MAC address, and the guest's IPv4 addresses appear nowhere.
for secret in 10.0.2.15 192.168.77.1 192.168.77.2; do
  grep -q "$secret" "$TESTBED_WORK/bundle.txt" && fail "the bundle contains $secret"
done

# Replay in the guest: the same check report as live, without touching the kernel.
"$EXPORTER" --replay "$TESTBED_WORK/bundle.txt" check --json >"$TESTBED_WORK/replay.check.json" \
  2>"$TESTBED_WORK/replay.check.err"
echo $? >"$TESTBED_WORK/replay.check.exit"
cmp -s "$TESTBED_WORK/live.check.json" "$TESTBED_WORK/replay.check.json" ||
  fail "replayed check differs from live: $(diff "$TESTBED_WORK/live.check.json" "$TESTBED_WORK/replay.check.json" | head -n 5)"
assert_eq "$(cat "$TESTBED_WORK/live.check.exit")" "$(cat "$TESTBED_WORK/replay.check.exit")" \
  "check exit status, live vs replay"

uname -r >"$TESTBED_WORK/kernel.release"
for f in bundle.txt live.metrics live.check.json live.check.exit kernel.release; do
  echo "@@FILE $f $(sha256sum <"$TESTBED_WORK/$f" | cut -d' ' -f1)"
  gzip -9c "$TESTBED_WORK/$f" | base64 | sed 's/^/@@DATA /'
  echo "@@END $f"
done
