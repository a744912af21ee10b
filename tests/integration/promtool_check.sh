#!/usr/bin/env bash
# The real exporter's /metrics passes `promtool check metrics` with zero warnings, with the
# correct Content-Type; /-/healthy, /-/ready, unknown paths (404) and wrong methods (405) answer as
# documented; SIGTERM stops it cleanly. It runs in a private network namespace with a veth pair
# selected by regex and every ethtool stat exported raw, so the checked body holds device series,
# not only self-metrics; one veth's name holds the byte 0xff, which the body must carry as U+FFFD.
# Usage: promtool_check.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
exe=${1:?usage: $0 path/to/roce_qos_exporter}
require_tools promtool curl ip ethtool
[[ $(id -u) -eq 0 ]] || skip "needs root for a private network namespace"

ns=rq-promtool-$$
work=$(mktemp -d)
pid=
namespaces=("$ns")
trap cleanup_exporter_test EXIT
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

set +e
promtool check metrics <"$work/body" >"$work/promtool.out" 2>&1
rc=$?
set -e
if [[ $rc -eq 0 && ! -s "$work/promtool.out" ]]; then
  pass "promtool check metrics: exit 0, no warnings ($(grep -vc '^#' "$work/body") samples)"
else
  fail "promtool check metrics exit $rc:"$'\n'"$(cat "$work/promtool.out")"
fi
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
