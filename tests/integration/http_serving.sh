#!/usr/bin/env bash
# The HTTP surface under hostile clients, against the real exporter over real sockets:
#  * 64 connections holding half-sent requests plus 64 connected-but-silent ones do not delay a
#    normal scrape (answered within 1 s), nor /-/healthy and /-/ready, and the sampler keeps its
#    period meanwhile (roce_exporter_sample_overruns_total unchanged);
#  * a request line longer than the 8 KiB head bound is refused (4xx or close), never served;
#  * POST /-/reload answers 403 without --web.enable-lifecycle and 200 with it;
#  * a gzip scrape decompresses to the plain body byte for byte (same snapshot: --sampler.period
#    1h, so both come from one cached render), with Content-Encoding and Vary, and the render ran
#    once for both;
#  * the served bytes and codes show in roce_exporter_http_* counters.
# Usage: http_serving.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
exe=${1:?usage: $0 path/to/roce_qos_exporter}
require_tools curl ip gzip cmp
[[ $(id -u) -eq 0 ]] || skip "needs root for a private network namespace"

ns=rq-http-$$
work=$(mktemp -d)
pid=
namespaces=("$ns")
trap cleanup_exporter_test EXIT
ip netns add "$ns" || skip "cannot create a network namespace here"
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link set lo up

url=http://127.0.0.1:9879
# start_exporter ARGS...: starts the exporter in $ns on 127.0.0.1:9879 and waits for /-/ready.
start_exporter() {
  ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include=lo \
    "$@" 2>"$work/exporter.log" &
  pid=$!
  wait_for 20 "/-/ready" in_ns curl -sf -o /dev/null "$url/-/ready"
}
stop_exporter() {
  kill "$pid" && wait "$pid" || true
  pid=
}
metric() { in_ns curl -sf "$url/metrics" -o "$work/m" && metric_value "$work/m" "$1"; }

echo "== thread names (top -H and perf tell the loops apart)"
start_exporter --sampler.period=100ms
names=" $(sort -u /proc/"$pid"/task/*/comm | tr '\n' ' ')"
for thread in roceqos-sampler roceqos-render roceqos-qos-mon civetweb-worker; do
  [[ $names == *" $thread "* ]] && pass "a thread is named $thread" ||
    fail "no thread named $thread among:$names"
done

echo "== slow clients"
overruns_before=$(metric roce_exporter_sample_overruns_total)
samples_before=$(metric roce_exporter_samples_total)
# The hostile connections are bash /dev/tcp descriptors inside the namespace, held open by a
# helper process until it is killed.
in_ns bash -c '
  for i in $(seq 64); do
    exec {fd}<>/dev/tcp/127.0.0.1/9879
    printf "GET /metrics HTTP/1.1\r\nHost: x\r\n" >&$fd  # half a request: no blank line
  done
  for i in $(seq 64); do exec {fd}<>/dev/tcp/127.0.0.1/9879; done  # connected, silent
  echo held >&2
  exec sleep 30' 2>"$work/held" >/dev/null &
holder=$!
wait_for 10 "128 hostile connections" grep -q held "$work/held"
for path in /metrics /-/healthy /-/ready; do
  t=$(in_ns curl -sf -o /dev/null --max-time 10 -w '%{time_total}' "$url$path") ||
    t=timeout
  if [[ $t != timeout ]] && awk -v t="$t" 'BEGIN { exit !(t < 1.0) }'; then
    pass "GET $path answered in ${t}s beside 64 half-sent and 64 silent connections"
  else
    fail "GET $path took $t beside 64 half-sent and 64 silent connections (bound 1 s)"
  fi
done
# Without selected ports the sampler publishes once per idle period (1 s): it must do so while
# the hostile connections are still held.
samples_after=$samples_before
sampled() {
  samples_after=$(metric roce_exporter_samples_total)
  ((samples_after > samples_before))
}
wait_for 5 "a sample beside the hostile connections" sampled &&
  pass "the sampler kept sampling ($samples_before -> $samples_after)" ||
  fail "the sampler stalled: samples $samples_before -> $samples_after"
kill "$holder"
wait "$holder" 2>/dev/null || true
overruns_after=$(metric roce_exporter_sample_overruns_total)
[[ $overruns_after == "$overruns_before" ]] &&
  pass "no sample overran its budget meanwhile ($overruns_after)" ||
  fail "sample overruns went $overruns_before -> $overruns_after under slow clients"

echo "== over-long request line"
long=$(head -c 20000 /dev/zero | tr '\0' a)
answer=$(in_ns bash -c 'exec 3<>/dev/tcp/127.0.0.1/9879; printf "GET /%s HTTP/1.1\r\nHost: x\r\n\r\n" "$1" >&3; timeout 5 head -c 200 <&3 | head -1' _ "$long" || true)
if [[ -z $answer || $answer =~ ^HTTP/1\.[01]\ 4[0-9][0-9] ]]; then
  pass "a 20000-byte request line is refused: '${answer%$'\r'}'"
else
  fail "a 20000-byte request line got: $answer"
fi
code=$(in_ns curl -s -o /dev/null -w '%{http_code}' "$url/-/healthy")
[[ $code == 200 ]] && pass "still serving after it" || fail "/-/healthy answered $code after it"

echo "== lifecycle gate off"
code=$(in_ns curl -s -o "$work/reload" -w '%{http_code}' -X POST "$url/-/reload")
[[ $code == 403 ]] && grep -q 'enable-lifecycle' "$work/reload" &&
  pass "POST /-/reload is 403 without --web.enable-lifecycle: $(cat "$work/reload")" ||
  fail "POST /-/reload without --web.enable-lifecycle: $code $(cat "$work/reload")"
stop_exporter

echo "== lifecycle gate on, gzip"
start_exporter --web.enable-lifecycle --sampler.period=1h --sampler.discovery-interval=1h
code=$(in_ns curl -s -o "$work/reload" -w '%{http_code}' -X POST "$url/-/reload")
[[ $code == 200 ]] && pass "POST /-/reload is 200 with --web.enable-lifecycle" ||
  fail "POST /-/reload with --web.enable-lifecycle: $code $(cat "$work/reload")"
in_ns curl -sf -D "$work/plain.h" -o "$work/plain" "$url/metrics"
in_ns curl -sf -H 'Accept-Encoding: gzip' -D "$work/gzip.h" -o "$work/body.gz" "$url/metrics"
grep -qi '^Content-Encoding: gzip' "$work/gzip.h" && pass "Content-Encoding: gzip when accepted" ||
  fail "no Content-Encoding: gzip: $(cat "$work/gzip.h")"
grep -qi '^Vary: Accept-Encoding' "$work/gzip.h" && grep -qi '^Vary: Accept-Encoding' "$work/plain.h" &&
  pass "Vary: Accept-Encoding on both" || fail "Vary missing"
! grep -qi '^Content-Encoding' "$work/plain.h" && pass "no Content-Encoding without Accept-Encoding" ||
  fail "plain response is encoded: $(cat "$work/plain.h")"
gzip -dc "$work/body.gz" >"$work/inflated"
cmp -s "$work/inflated" "$work/plain" &&
  pass "gzip body ($(stat -c %s "$work/body.gz") B) inflates to the plain body ($(stat -c %s "$work/plain") B) byte for byte" ||
  fail "gzip body differs from the plain body after decompression"
in_ns curl -sf -H 'Accept-Encoding: gzip;q=0, *' -D "$work/q0.h" -o /dev/null "$url/metrics"
! grep -qi '^Content-Encoding' "$work/q0.h" && pass "gzip;q=0 is honoured" || fail "gzip;q=0 got gzip"
renders=$(metric_value "$work/plain" roce_exporter_scrape_renders_total)
[[ $renders == 1 ]] && pass "one render served both scrapes of one snapshot" ||
  fail "renders_total $renders for one snapshot"
stop_exporter
finish http_serving
