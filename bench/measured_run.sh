#!/usr/bin/env bash
# Measured run for docs/performance.md: the real exporter in a private network namespace with N
# veth pairs (2N netdevs selected), default period, scraped every 15 s like Prometheus would; after
# DURATION seconds prints its RSS, CPU time and the self-metrics. Needs root.
# Usage: bench/measured_run.sh path/to/roce_qos_exporter [pairs=4] [duration=60] [extra flags...]
set -euo pipefail
exe=${1:?usage: $0 path/to/roce_qos_exporter [pairs] [duration] [flags...]}
pairs=${2:-4}
duration=${3:-60}
shift $(($# < 3 ? $# : 3))
ns=rq-measure-$$
pid=
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
for ((i = 0; i < pairs; i++)); do
  ip -n "$ns" link add "rqm${i}a" type veth peer name "rqm${i}b"
  ip -n "$ns" link set "rqm${i}a" up
  ip -n "$ns" link set "rqm${i}b" up
done
ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include='rqm.*' \
  --log.level=warn "$@" &
pid=$!
ticks=$(getconf CLK_TCK)
start=$SECONDS
scrapes=0
while ((SECONDS - start < duration)); do
  sleep 15
  ip netns exec "$ns" curl -sf -o /dev/null http://127.0.0.1:9879/metrics && scrapes=$((scrapes + 1))
done
read -r -a stat <"/proc/$pid/stat"
cpu_s=$(awk -v u="${stat[13]}" -v s="${stat[14]}" -v t="$ticks" 'BEGIN { printf "%.2f", (u + s) / t }')
elapsed=$((SECONDS - start))
echo "kernel $(uname -r), $(nproc) vCPU; $((2 * pairs)) veth netdevs; ${elapsed}s; $scrapes scrapes"
grep -E '^(VmRSS|VmHWM|Threads)' "/proc/$pid/status"
echo "CPU time: ${cpu_s}s user+system = $(awk -v c="$cpu_s" -v e="$elapsed" 'BEGIN { printf "%.2f", 100 * c / e }')% of one CPU"
ip netns exec "$ns" curl -sf http://127.0.0.1:9879/metrics |
  grep -E '^roce_exporter_(samples_total|sample_period_seconds|sample_kernel_seconds|sample_overruns_total|collect_duration_seconds)' 
