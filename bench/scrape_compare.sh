#!/usr/bin/env bash
# Side by side, one run: node_exporter (Debian prometheus-node-exporter, ethtool collector only)
# and roce_qos_exporter on the same 64 veths in a private network namespace. Reports per exporter:
# scrape median and p99 (curl time_total over sequential scrapes), CPU seconds over a fixed
# window of 15 s scrapes, RSS, plain and gzip body bytes. Then this exporter's cached scrapes alone
# (a period of 1h: no new snapshot during the run, so every scrape after the first is one copy of
# the cached body). Then the exporter alone on 8 veths at
# the default period: CPU share of one core over the window. Figures: docs/performance.md.
# Usage (root): bench/scrape_compare.sh path/to/roce_qos_exporter [scrapes] [window_seconds]
set -euo pipefail
exe=$(realpath "${1:?usage: $0 path/to/roce_qos_exporter [scrapes] [window_seconds]}")
scrapes=${2:-300}
window=${3:-60}
node_exporter=${NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
[[ $(id -u) -eq 0 ]] || { echo "needs root (network namespace)" >&2; exit 1; }
[[ -x $node_exporter ]] || { echo "apt-get install prometheus-node-exporter" >&2; exit 1; }
ns=rq-bench-$$
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM  # the EXIT trap then stops the exporters
ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link set lo up
make_veths() {  # N: rqb0..rqb(N-1), each with its peer rqp<i>
  for ((i = 0; i < $1; i++)); do
    in_ns ip link add "rqb$i" type veth peer name "rqp$i"
    in_ns ip link set "rqb$i" up
    in_ns ip link set "rqp$i" up
  done
}
cpu_seconds() {  # PID: utime + stime of the process, seconds
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
wait_up() {  # URL
  for _ in $(seq 200); do in_ns curl -sf -o /dev/null "$1" && return 0; sleep 0.05; done
  echo "not answering: $1" >&2
  exit 1
}
# scrape_times NAME URL: `scrapes` sequential gzip scrapes; sets median and p99 (ms).
scrape_times() {
  local name=$1 url=$2 args=()
  # One curl process for all scrapes, so the scrapes follow each other as fast as each answer
  # comes (as a busy Prometheus would), not at the pace of process start-up.
  for ((i = 0; i < scrapes; i++)); do args+=(-o /dev/null "$url"); done
  in_ns curl -sf -H 'Accept-Encoding: gzip' -w '%{time_total}\n' "${args[@]}" |
    sort -g >"$work/$name.times"
  median=$(awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] * 1000 }' "$work/$name.times")
  p99=$(awk '{ a[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; print a[i] * 1000 }' \
    "$work/$name.times")
}
# measure NAME PID URL: sequential scrapes (median, p99), bytes, then CPU over the window.
measure() {
  local name=$1 pid=$2 url=$3
  local median p99 plain gz cpu0 cpu1
  scrape_times "$name" "$url"
  plain=$(in_ns curl -sf -o /dev/null -w '%{size_download}' "$url")
  gz=$(in_ns curl -sf -o /dev/null -H 'Accept-Encoding: gzip' -w '%{size_download}' "$url")
  cpu0=$(cpu_seconds "$pid")
  for ((t = 0; t < window; t += 15)); do
    in_ns curl -sf -o /dev/null -H 'Accept-Encoding: gzip' "$url"
    sleep 15
  done
  cpu1=$(cpu_seconds "$pid")
  printf '%-18s median %8.3f ms  p99 %8.3f ms  cpu %6.2f s/%ss (%.3f%% core)  rss %6d KiB  plain %8d B  gzip %7d B (%.1f%%)\n' \
    "$name" "$median" "$p99" "$(echo "$cpu1 - $cpu0" | bc -l)" "$window" \
    "$(echo "($cpu1 - $cpu0) * 100 / $window" | bc -l)" "$(rss_kib "$pid")" "$plain" "$gz" \
    "$(echo "$gz * 100 / $plain" | bc -l)"
}

echo "== 64 veths, $scrapes scrapes each (gzip, sequential), CPU over ${window}s of 15 s scrapes"
make_veths 64
ip netns exec "$ns" "$node_exporter" --web.listen-address=127.0.0.1:9100 --collector.disable-defaults \
  --collector.ethtool 2>"$work/node.log" &
pids+=($!)
ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include='rqb.*' \
  2>"$work/exporter.log" &
pids+=($!)
wait_up http://127.0.0.1:9100/metrics
wait_up http://127.0.0.1:9879/-/ready
measure node_exporter "${pids[0]}" http://127.0.0.1:9100/metrics
measure roce_qos_exporter "${pids[1]}" http://127.0.0.1:9879/metrics
for p in "${pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
pids=()

echo "== 64 veths, cached scrapes only: --sampler.period=1h, so only the first scrape renders"
ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include='rqb.*' \
  --sampler.period=1h --sampler.discovery-interval=1h 2>"$work/exporter.log" &
pids+=($!)
wait_up http://127.0.0.1:9879/-/ready
in_ns curl -sf -o /dev/null -H 'Accept-Encoding: gzip' http://127.0.0.1:9879/metrics # the render
scrape_times cached http://127.0.0.1:9879/metrics
printf '%-18s median %8.3f ms  p99 %8.3f ms\n' roce_qos_exporter_cached "$median" "$p99"
for p in "${pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
pids=()

echo "== 8 veths, roce_qos_exporter alone, default period (250ms), CPU over ${window}s of 15 s scrapes"
for ((i = 8; i < 64; i++)); do in_ns ip link del "rqb$i"; done
ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include='rqb.*' \
  2>"$work/exporter.log" &
pids+=($!)
wait_up http://127.0.0.1:9879/-/ready
measure roce_qos_exporter_8veths "${pids[0]}" http://127.0.0.1:9879/metrics
