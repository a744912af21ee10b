#!/usr/bin/env bash
# Side by side, one run: node_exporter (Debian prometheus-node-exporter, ethtool collector only)
# and roce_qos_exporter on the same veths (8, then 64) in a private network namespace.
# Headline, per device count: Prometheus-like scrapes, interleaved between the exporters — each
# scrape one new curl process (so one new TCP connection) with Accept-Encoding: gzip, rounds
# spaced so that every roce_qos_exporter scrape comes after a new snapshot (default 250 ms
# period), as every scrape of a Prometheus scraping every 15 s does; median and p99 of curl's
# time_total, and the ratio of the medians. The script checks that every such scrape got a new
# snapshot (roce_exporter_samples_total in its body differs from the previous scrape's), and says
# where the bodies came from (roce_exporter_scrapes_total: rendered ahead by the render worker,
# waited for, rendered on the scrape's path). Secondary line: the same scrapes of a second
# roce_qos_exporter with --sampler.period=1h, which serves one cached body (the floor: no render).
# Then per exporter, after 4 scrapes 15 s apart: CPU seconds (/proc/PID/stat) over a window of one
# scrape every 15 s (for roce_qos_exporter with the renders done in it), RSS, plain and gzip
# body bytes.
# Last, the same headline and CPU window for 8 mlx5-like ports without node_exporter: this exporter
# replaying (--replay) the 8-port ConnectX node captured in the testbed (bench/fleet/node8), its
# counters moving at their captured rates (bench/fleet/synth.py), natively: mlx5 bodies, with no
# kernel read (so neither the driver's nor the firmware's cost).
# Figures: docs/performance.md "Serving".
# Usage (root): bench/scrape_compare.sh path/to/roce_qos_exporter [scrapes] [window_seconds]
set -euo pipefail
exe=$(realpath "${1:?usage: $0 path/to/roce_qos_exporter [scrapes] [window_seconds]}")
scrapes=${2:-200}
window=${3:-60}
node_exporter=${NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
here=$(cd "$(dirname "$0")" && pwd)
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
veths=0
make_veths() {  # N: rqb0..rqb(N-1), each with its peer rqp<i>
  for ((i = veths; i < $1; i++)); do
    in_ns ip link add "rqb$i" type veth peer name "rqp$i"
    in_ns ip link set "rqb$i" up
    in_ns ip link set "rqp$i" up
  done
  veths=$1
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
# URL: "renders prerendered cached waited rendered" (roce_exporter_scrape_renders_total and
# roce_exporter_scrapes_total{body}) from a collect[]=self scrape, which renders itself: a
# selection of its own, never ready, so the difference of two reads counts 1 render and 1 rendered
# scrape of the first read.
serving_counters() {
  in_ns curl -sf "$1?collect[]=self" | awk '
    $1 == "roce_exporter_scrape_renders_total" { r = $2 }
    $1 ~ /^roce_exporter_scrapes_total\{body="/ { split($1, a, "\""); n[a[2]] = $2 }
    END { print r + 0, n["prerendered"] + 0, n["cached"] + 0, n["waited"] + 0, n["rendered"] + 0 }'
}
samples_in() {  # FILE (gzip): roce_exporter_samples_total of the body
  gzip -dc "$1" | awk '$1 == "roce_exporter_samples_total" { print $2 }'
}
# NAME URL [BODY]: one Prometheus-like scrape; appends curl's time_total (s) to NAME.times and
# keeps the (gzip) body in BODY. The body goes to curl's stdout, opened by the shell before curl
# starts: `curl -o FILE` creates the file inside its timed transfer (+0.6 ms on this VM).
scrape() {
  local out
  out=$(in_ns curl -s -o - -H 'Accept-Encoding: gzip' \
    -w '%{stderr}%{http_code} %{time_total}' "$2" 2>&1 >"${3:-/dev/null}")
  [[ ${out%% *} == 200 ]] || { echo "$1: scrape answered '$out'" >&2; exit 1; }
  echo "${out#* }" >>"$work/$1.times"
}
stats() {  # NAME: sets median and p99 (ms) of NAME.times
  sort -g "$work/$1.times" >"$work/$1.sorted"
  median=$(awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] * 1000 }' "$work/$1.sorted")
  p99=$(awk '{ a[NR] = $1 } END { i = int(NR * 0.99 + 0.999); print a[i] * 1000 }' \
    "$work/$1.sorted")
}
slow_scrapes() {  # NODE_URL (may be empty) URL: one gzip scrape of each
  [[ -z $1 ]] || in_ns curl -sf -o /dev/null -H 'Accept-Encoding: gzip' "$1"
  in_ns curl -sf -o /dev/null -H 'Accept-Encoding: gzip' "$2"
}
bytes() {  # URL: plain and gzip body bytes
  plain=$(in_ns curl -sf -o /dev/null -w '%{size_download}' "$1")
  gz=$(in_ns curl -sf -o /dev/null -H 'Accept-Encoding: gzip' -w '%{size_download}' "$1")
}

# start_veths N: node_exporter, this exporter and its cached twin on N veths.
start_veths() {
  make_veths "$1"
  ip netns exec "$ns" "$node_exporter" --web.listen-address=127.0.0.1:9100 \
    --collector.disable-defaults --collector.ethtool 2>"$work/node.log" &
  node_pid=$!
  ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 \
    --collector.device-include='rqb.*' 2>"$work/exporter.log" &
  exporter_pid=$!
  ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9880 \
    --collector.device-include='rqb.*' --sampler.period=1h --sampler.discovery-interval=1h \
    2>"$work/cached.log" &
  pids=("$node_pid" "$exporter_pid" $!)
  node_url=http://127.0.0.1:9100/metrics cached_url=http://127.0.0.1:9880/metrics
  wait_up "$node_url"
  wait_up http://127.0.0.1:9880/-/ready
  in_ns curl -sf -o /dev/null -H 'Accept-Encoding: gzip' "$cached_url"  # its one render
}
# start_replay: this exporter alone, replaying 8 mlx5-like ports for as many 250 ms samples as
# the run takes (rounds of ~0.4 s, 60 s of warm-up scrapes, the window, a margin).
start_replay() {
  local samples=$((((scrapes + 2) * 4 / 10 + 60 + window + 60) * 4))
  python3 "$here/fleet/synth.py" --template "$here/fleet/node8/bundle.txt" --nodes 1 \
    --period 0.25 --samples "$samples" --out "$work/replay" --base-port 9879 >/dev/null
  ip netns exec "$ns" "$exe" --replay "$work/replay/node000.bundle" \
    --web.listen-address=127.0.0.1:9879 2>"$work/exporter.log" &
  exporter_pid=$!
  pids=("$exporter_pid")
  node_url="" cached_url=""
}

run_size() {  # N (veths) or "replay" (8 mlx5-like ports)
  local n=$1 url=http://127.0.0.1:9879/metrics title="$1 veths" node_url cached_url
  local node_pid="" exporter_pid
  rm -f "$work"/*.times
  if [[ $n == replay ]]; then
    start_replay
    title="8 mlx5-like ports (replayed ConnectX capture, no node_exporter)"
  else
    start_veths "$n"
  fi
  wait_up http://127.0.0.1:9879/-/ready
  local before after samples previous=none new_snapshots=0
  # Two unmeasured rounds first: an exporter knows a scraper from its second scrape, and a
  # Prometheus pays its first two scrapes' renders once in its life, not twice per $scrapes.
  for ((i = -2; i < scrapes; i++)); do
    ((i != 0)) || { rm -f "$work"/*.times; read -ra before <<<"$(serving_counters "$url")"; }
    [[ -z $node_url ]] || scrape node_exporter "$node_url"
    scrape roce_qos_exporter "$url" "$work/body.gz"
    [[ -z $cached_url ]] || scrape cached "$cached_url"
    ((i >= 0)) || { sleep 0.3; continue; }
    samples=$(samples_in "$work/body.gz")
    [[ $samples != "$previous" ]] && new_snapshots=$((new_snapshots + 1))
    previous=$samples
    sleep 0.3  # > the 250 ms period: the next scrape finds a new snapshot
  done
  read -ra after <<<"$(serving_counters "$url")"
  ((new_snapshots == scrapes)) ||
    echo "WARNING: only $new_snapshots of $scrapes scrapes got a new snapshot" >&2
  echo "== $title: $scrapes Prometheus-like scrapes each (new connection, gzip, interleaved)"
  local node_median="" ratio=""
  if [[ -n $node_url ]]; then
    stats node_exporter
    node_median=$median
    printf '%-34s median %8.3f ms  p99 %8.3f ms\n' node_exporter "$median" "$p99"
  fi
  stats roce_qos_exporter
  [[ -z $node_median ]] || ratio=$(printf '  (%.0fx node_exporter)' "$(echo "$node_median / $median" | bc -l)")
  printf '%-34s median %8.3f ms  p99 %8.3f ms%s\n' roce_qos_exporter "$median" "$p99" "$ratio"
  printf '%-34s %d of %d got a new snapshot; bodies: %d prerendered, %d waited, %d rendered on the scrape path, %d cached\n' \
    "" "$new_snapshots" "$scrapes" "$((after[1] - before[1]))" "$((after[3] - before[3]))" \
    "$((after[4] - before[4] - 1))" "$((after[2] - before[2]))"
  if [[ -n $cached_url ]]; then
    stats cached
    printf '%-34s median %8.3f ms  p99 %8.3f ms\n' "  cached body (no new snapshot)" "$median" "$p99"
  fi
  local cpu_node0 cpu_node1 cpu0 cpu1
  # Four scrapes 15 s apart first, so the exporter predicts this scraper from its last intervals
  # (scrape_schedule.h) as it would a Prometheus's, not from the headline's 0.3 s ones.
  for ((t = 0; t < 60; t += 15)); do
    slow_scrapes "$node_url" "$url"
    sleep 15
  done
  read -ra before <<<"$(serving_counters "$url")"
  [[ -z $node_pid ]] || cpu_node0=$(cpu_seconds "$node_pid")
  cpu0=$(cpu_seconds "$exporter_pid")
  for ((t = 0; t < window; t += 15)); do
    slow_scrapes "$node_url" "$url"
    sleep 15
  done
  [[ -z $node_pid ]] || cpu_node1=$(cpu_seconds "$node_pid")
  cpu1=$(cpu_seconds "$exporter_pid")
  read -ra after <<<"$(serving_counters "$url")"
  ((window > 0)) || window=1 # no CPU window asked for: the figures below read 0
  for name in ${node_pid:+node_exporter} roce_qos_exporter; do
    if [[ $name == node_exporter ]]; then
      bytes "$node_url"
      set -- "$cpu_node0" "$cpu_node1" "$node_pid"
    else
      bytes "$url"
      set -- "$cpu0" "$cpu1" "$exporter_pid"
    fi
    printf '%-34s cpu %6.2f s/%ss (%.3f%% core)  rss %6d KiB  plain %8d B  gzip %7d B (%.1f%%)\n' \
      "$name" "$(echo "$2 - $1" | bc -l)" "$window" "$(echo "($2 - $1) * 100 / $window" | bc -l)" \
      "$(rss_kib "$3")" "$plain" "$gz" "$(echo "$gz * 100 / $plain" | bc -l)"
  done
  printf '%-34s %d renders in the window, for %d scrapes\n' "" \
    "$((after[0] - before[0] - 1))" "$(((window + 14) / 15))"
  for p in "${pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
  pids=()
}

run_size 8
run_size 64
run_size replay
