#!/usr/bin/env bash
# The real exporter's /metrics passes `promtool check metrics` with zero warnings:
#  * replayed from every shipped fixture (tests/fixtures/replay/<kernel>/bundle.txt: simnic's mlx5
#    ports, veth, Soft-RoCE, with every QoS and derived family and every ethtool stat exported
#    raw), no root needed: the bodies of the NICs this host does not have;
#  * live, in a private network namespace with a veth pair selected by regex and every ethtool stat
#    exported raw (root), one veth's name holding the byte 0xff, which the body must carry as U+FFFD;
#    with the correct Content-Type; /-/healthy, /-/ready, unknown paths (404)
#    and wrong methods (405) answer as documented; SIGTERM stops it cleanly.
# Usage: promtool_check.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
exe=${1:?usage: $0 path/to/roce_qos_exporter}
require_tools promtool curl ip ethtool
fixtures=$(cd "$(dirname "$0")/../fixtures/replay" && pwd)

ns=rq-promtool-$$
work=$(mktemp -d)
pid=
namespaces=()
trap cleanup_exporter_test EXIT

# promtool_clean NAME BODY: `promtool check metrics` exits 0 and says nothing (no warning either).
promtool_clean() {
  local rc=0
  promtool check metrics <"$2" >"$work/promtool.out" 2>&1 || rc=$?
  if [[ $rc -eq 0 && ! -s "$work/promtool.out" ]]; then
    pass "$1: promtool check metrics: exit 0, no warnings ($(grep -vc '^#' "$2") samples)"
  else
    fail "$1: promtool check metrics exit $rc:"$'\n'"$(head -n 20 "$work/promtool.out")"
  fi
}

# The replayed body is complete once the QoS stage and the RDMA counters are in it.
replayed_port=
replay_listening() {
  replayed_port=$(sed -n 's/.*msg="listening" .* ports=\([0-9]*\).*/\1/p' "$work/exporter.log" |
    head -n1)
  [[ -n $replayed_port ]]
}
replay_complete() {
  curl -sf "http://127.0.0.1:$replayed_port/metrics" -o "$work/replay.body" &&
    grep -q '^roce_qos_drift{' "$work/replay.body" &&
    grep -q '^roce_cnp_sent_total{' "$work/replay.body"
}
check_replayed_fixture() {
  local dir=$1 name
  name=replay/$(basename "$dir")
  : >"$work/exporter.log"
  "$exe" --replay "$dir/bundle.txt" --web.listen-address=127.0.0.1:0 \
    --collector.ethtool.raw-include='.*' 2>"$work/exporter.log" &
  pid=$!
  if wait_for 20 "listening" replay_listening && wait_for 20 "a complete body" replay_complete; then
    promtool_clean "$name" "$work/replay.body"
    grep -q '^roce_ethtool_stat{' "$work/replay.body" && pass "$name: the body holds raw stats" ||
      fail "$name: no roce_ethtool_stat series in the checked body"
  else
    fail "$name: no complete body to check (port '$replayed_port')"
  fi
  kill "$pid" && wait "$pid" || true
  pid=
}
found=0
for dir in "$fixtures"/*/; do
  [[ -f $dir/bundle.txt ]] || continue
  found=$((found + 1))
  check_replayed_fixture "${dir%/}"
done
((found > 0)) || fail "no fixture under $fixtures"

if [[ $(id -u) -ne 0 ]]; then
  ((failures == 0)) || finish promtool_check
  skip "the live part needs root for a private network namespace (the $found replayed fixtures passed)"
fi
namespaces=("$ns")
ip netns add "$ns" || skip "cannot create a network namespace here"
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link set lo up
in_ns ip link add rqp0 type veth peer name rqp1
in_ns ip link set rqp0 up
in_ns ip link set rqp1 up
# A netdev name that is not UTF-8 (the kernel allows any byte but '/', ':', whitespace and NUL):
# its series must still be valid label values, the byte written as U+FFFD.
in_ns ip link add $'rqp\xff' type veth peer name rqpu
in_ns ip link set $'rqp\xff' up
in_ns ip link set rqpu up

url=http://127.0.0.1:9879
ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 --log.level=debug \
  --collector.device-include='rqp.*|lo' --collector.ethtool.raw-include='.*' \
  2>"$work/exporter.log" &
pid=$!  # ip netns exec execs the exporter: this is its pid

ready() { in_ns curl -sf -o /dev/null "$url/-/ready"; }
wait_for 20 "/-/ready" ready || {
  cat "$work/exporter.log" >&2
  exit 1
}
pass "/-/ready answers 200 after the first sample"

has_device_series() {
  in_ns curl -sf "$url/metrics" -o "$work/body" && grep -q 'netdev="rqp0"' "$work/body"
}
wait_for 10 "series of rqp0" has_device_series && pass "rqp0 is sampled" || fail "no rqp0 series"
grep -qF $'roce_netdev_info{netdev="rqp\xef\xbf\xbd"' "$work/body" &&
  pass "the netdev named rqp<0xff> is sampled, its label value rqp<U+FFFD>" ||
  fail "no roce_netdev_info for rqp<0xff> as rqp<U+FFFD>: $(grep -a 'roce_netdev_info' "$work/body" | cat -v)"

in_ns curl -sS -D "$work/headers" -o "$work/body" "$url/metrics"
if grep -qi $'^content-type: text/plain; version=0.0.4; charset=utf-8\r$' "$work/headers"; then
  pass "Content-Type: text/plain; version=0.0.4; charset=utf-8"
else
  fail "wrong Content-Type: $(grep -i '^content-type' "$work/headers")"
fi

promtool_clean live "$work/body"
for family in roce_exporter_build_info roce_netdev_info roce_ethtool_stat \
  roce_exporter_collect_duration_seconds roce_exporter_sample_period_seconds; do
  grep -q "^# TYPE $family " "$work/body" && pass "family $family present" ||
    fail "family $family missing"
done
grep -q '^exposer_' "$work/body" && fail "prometheus-cpp exposer_* metrics leaked" ||
  pass "no exposer_* meta-metrics"

status() { in_ns curl -s -o /dev/null -w '%{http_code}' -X "$1" "$url$2"; }
expect_status() {
  local got
  got=$(status "$1" "$2")
  [[ "$got" == "$3" ]] && pass "$1 $2 -> $3" || fail "$1 $2 -> $got, expected $3"
}
expect_status GET /-/healthy 200
expect_status GET /-/ready 200
expect_status GET / 200
expect_status GET /nonexistent 404
expect_status GET /metrics/x 404
expect_status POST /metrics 405
expect_status DELETE /-/healthy 405
big=$(head -c 70000 /dev/zero | tr '\0' a)
got=$(in_ns curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$url/metrics")
[[ "$got" == 4* ]] && pass "a 70 kB header gets $got" || fail "a 70 kB header got '$got'"
expect_status GET /-/healthy 200

kill -TERM "$pid"
stopped() { ! kill -0 "$pid" 2>/dev/null; }
if wait_for 15 "exit after SIGTERM" stopped; then
  set +e
  wait "$pid"
  rc=$?
  set -e
  pid=
  [[ $rc -eq 0 ]] && pass "SIGTERM: clean exit 0" || fail "SIGTERM: exit $rc"
else
  fail "still running 15 s after SIGTERM"
fi
grep -q 'level=error' "$work/exporter.log" && fail "errors logged:"$'\n'"$(grep level=error "$work/exporter.log")" ||
  pass "no error logged"

finish promtool_check
