#!/usr/bin/env bash
# The HTTP surface under hostile clients, against the real exporter over real sockets:
#  * the exporter at its defaults runs at most 24 tasks (the shipped unit's TasksMax=64 with room
#    to spare; the count is printed), and starts inside a real pids cgroup with pids.max=24;
#  * 64 connections holding half-sent requests plus 64 connected-but-silent ones do not delay a
#    normal scrape (answered within 1 s, the time printed), nor /-/healthy and /-/ready, and the
#    sampler keeps its period meanwhile (roce_exporter_sample_overruns_total unchanged); neither
#    do 200 + 200 of them, past --web.max-connections;
#  * a task limit too low for the exporter's threads (pids.max of a real pids cgroup;
#    RLIMIT_NPROC of an unprivileged uid) ends it with exit 1 and a message naming TasksMax,
#    pids.max and ulimit -u, whichever thread is the one refused;
#  * --web.listen-address=[::1]:9879 serves over IPv6, and [::]:9879 over IPv6 and IPv4;
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
require_tools curl ip gzip cmp setpriv prlimit
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
listen=127.0.0.1:9879
# start_exporter ARGS...: starts the exporter in $ns on $listen and waits for /-/ready at $url.
start_exporter() {
  ip netns exec "$ns" "$exe" --web.listen-address="$listen" --collector.device-include=lo \
    "$@" 2>"$work/exporter.log" &
  pid=$!
  wait_for 20 "/-/ready" in_ns curl -gsf -o /dev/null "$url/-/ready"
}
# stop_exporter: SIGTERM, and the exporter must exit 0 (under ASan a leak or any report at exit
# makes it exit 66, which only this status shows: its stderr goes to exporter.log).
stop_exporter() {
  local rc=0
  kill "$pid" && wait "$pid" || rc=$?
  ((rc == 0)) || fail "the exporter exited $rc on SIGTERM: $(tail -n 20 "$work/exporter.log")"
  pid=
}
metric() { in_ns curl -sf "$url/metrics" -o "$work/m" && metric_value "$work/m" "$1"; }

# all_started: main starts the QoS monitor last, after the sampler, whose first sample is what
# makes /-/ready answer: so /-/ready can answer before that thread exists, and a task count or
# name list read at once can miss it.
all_started() {
  wait_for 5 "the QoS monitor thread" grep -qx roceqos-qos-mon /proc/"$pid"/task/*/comm ||
    fail "no roceqos-qos-mon thread 5 s after /-/ready: $(sort -u /proc/"$pid"/task/*/comm | tr '\n' ' ')"
}

echo "== tasks at the defaults"
start_exporter
all_started
tasks=$(ls /proc/"$pid"/task | wc -l)
((tasks <= 24)) && pass "the exporter at its defaults runs $tasks tasks (bound 24; TasksMax=64)" ||
  fail "the exporter at its defaults runs $tasks tasks (bound 24): $(cat /proc/"$pid"/task/*/comm | sort | uniq -c | tr '\n' ' ')"
stop_exporter

echo "== thread names (top -H and perf tell the loops apart)"
start_exporter --sampler.period=100ms
all_started
names=" $(sort -u /proc/"$pid"/task/*/comm | tr '\n' ' ')"
for thread in roceqos-sampler roceqos-render roceqos-qos-mon roceqos-http roceqos-handler; do
  [[ $names == *" $thread "* ]] && pass "a thread is named $thread" ||
    fail "no thread named $thread among:$names"
done

echo "== slow clients"
overruns_before=$(metric roce_exporter_sample_overruns_total)
samples_before=$(metric roce_exporter_samples_total)
# hold_hostile N: N connections holding half a request and N connected but silent, as bash
# /dev/tcp descriptors inside the namespace, held open by a helper process ($holder) until killed.
hold_hostile() {
  : >"$work/held"  # exists before the helper's redirection creates it: wait_for greps it at once
  in_ns bash -c '
    for i in $(seq "$1"); do
      exec {fd}<>/dev/tcp/127.0.0.1/9879
      printf "GET /metrics HTTP/1.1\r\nHost: x\r\n" >&$fd  # half a request: no blank line
    done
    for i in $(seq "$1"); do exec {fd}<>/dev/tcp/127.0.0.1/9879; done  # connected, silent
    echo held >&2
    exec sleep 30' _ "$1" 2>"$work/held" >/dev/null &
  holder=$!
  wait_for 10 "$((2 * $1)) hostile connections" grep -q held "$work/held"
}
release_hostile() {
  kill "$holder"
  wait "$holder" 2>/dev/null || true
  : >"$work/held"
}
# scrapes_beside DESCRIPTION: each path answers within 1 s (the time printed).
scrapes_beside() {
  local path t
  for path in /metrics /-/healthy /-/ready; do
    t=$(in_ns curl -sf -o /dev/null --max-time 10 -w '%{time_total}' "$url$path") ||
      t=timeout
    if [[ $t != timeout ]] && awk -v t="$t" 'BEGIN { exit !(t < 1.0) }'; then
      pass "GET $path answered in ${t}s beside $1"
    else
      fail "GET $path took $t beside $1 (bound 1 s)"
    fi
  done
}
hold_hostile 64
scrapes_beside "64 half-sent and 64 silent connections"
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
release_hostile
overruns_after=$(metric roce_exporter_sample_overruns_total)
[[ $overruns_after == "$overruns_before" ]] &&
  pass "no sample overran its budget meanwhile ($overruns_after)" ||
  fail "sample overruns went $overruns_before -> $overruns_after under slow clients"
# Past --web.max-connections (256): the oldest idle connections are closed for new ones.
hold_hostile 200
scrapes_beside "200 half-sent and 200 silent connections (past --web.max-connections=256)"
release_hostile

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

echo "== IPv6 listen addresses"
url='http://[::1]:9879' listen='[::1]:9879'
start_exporter
in_ns curl -gsf -o "$work/v6" "$url/metrics" && grep -q '^roce_exporter_build_info' "$work/v6" &&
  pass "--web.listen-address=[::1]:9879 serves /metrics over IPv6" ||
  fail "no /metrics over [::1]:9879"
! in_ns curl -sf -o /dev/null --max-time 2 http://127.0.0.1:9879/metrics &&
  pass "[::1] takes no IPv4" || fail "[::1]:9879 answered on 127.0.0.1"
stop_exporter
listen='[::]:9879'
start_exporter
in_ns curl -sf -o /dev/null http://127.0.0.1:9879/metrics &&
  pass "[::]:9879 serves IPv4 (dual stack)" || fail "[::]:9879 does not answer on 127.0.0.1"
stop_exporter
url=http://127.0.0.1:9879 listen=127.0.0.1:9879

echo "== task limits"
# expect_thread_limit WHAT COMMAND...: COMMAND runs the exporter under a task limit too low for
# it; it must exit 1 and name the limits.
expect_thread_limit() {
  local what=$1 rc=0
  shift
  "$@" >"$work/limit.log" 2>&1 || rc=$?
  if ((rc == 1)) && grep -q 'cannot create a thread' "$work/limit.log" &&
    grep -q 'TasksMax' "$work/limit.log" && grep -q 'pids.max' "$work/limit.log" &&
    grep -q 'ulimit -u' "$work/limit.log"; then
    pass "$what: exit 1, $(grep -o 'cannot create a thread[^:]*' "$work/limit.log" | head -1)"
  else
    fail "$what: exit $rc, $(cat "$work/limit.log")"
  fi
}
pids_root=/sys/fs/cgroup/pids
[[ -f $pids_root/cgroup.procs ]] || pids_root=/sys/fs/cgroup  # cgroup v2: the unified tree
cg=$pids_root/rq-http-$$
if mkdir "$cg" 2>/dev/null && [[ -f $cg/pids.max ]]; then
  cleanup_cgroup() { rmdir "$cg" 2>/dev/null || true; }
  trap 'cleanup_cgroup; cleanup_exporter_test' EXIT
  # COMMAND... after it runs in pids cgroup $cg and network namespace $ns. The cgroup is joined
  # first: `ip netns exec` mounts the namespace's own /sys.
  in_cgroup=(sh -c 'echo $$ >"$0/cgroup.procs" && ns=$1 && shift && exec ip netns exec "$ns" "$@"'
    "$cg" "$ns")
  echo 24 >"$cg/pids.max"
  "${in_cgroup[@]}" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include=lo \
    2>"$work/exporter.log" &
  pid=$!
  wait_for 20 "/-/ready in pids.max=24" in_ns curl -sf -o /dev/null "$url/-/ready" &&
    pass "the exporter at its defaults serves in a pids cgroup with pids.max=24 ($(cat "$cg/pids.current") tasks)" ||
    fail "the exporter does not start with pids.max=24"
  stop_exporter
  echo 3 >"$cg/pids.max"
  expect_thread_limit "pids.max=3 (the HTTP server's threads)" timeout 30 "${in_cgroup[@]}" "$exe" \
    --web.listen-address=127.0.0.1:9879 --collector.device-include=lo
  echo $((tasks - 1)) >"$cg/pids.max"
  expect_thread_limit "pids.max=$((tasks - 1)) (the last thread to start)" timeout 30 \
    "${in_cgroup[@]}" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include=lo
else
  echo "note: no pids cgroup to create here; RLIMIT_NPROC only"
fi
# RLIMIT_NPROC binds an unprivileged uid only; it counts every thread of that uid.
chmod o+rx "$work"
cp "$exe" "$work/exporter" && chmod o+rx "$work/exporter"
expect_thread_limit "RLIMIT_NPROC=3 for uid 65534" timeout 30 ip netns exec "$ns" prlimit --nproc=3 \
  setpriv --reuid=65534 --regid=65534 --clear-groups "$work/exporter" \
  --web.listen-address=127.0.0.1:9879 --collector.device-include=lo
finish http_serving
