#!/usr/bin/env bash
# A real Prometheus (Debian `prometheus`) scraping the exporter at its interval, as on a node: how
# many of its scrapes found their body rendered ahead (roce_exporter_scrapes_total{body}) and how
# many renders that took (roce_exporter_scrape_renders_total). The exporter replays the testbed's
# 8-port ConnectX capture (bench/fleet/node8, counters moving at their captured rates,
# bench/fleet/synth.py) at the default 250 ms period, natively, so a new snapshot precedes every
# scrape. A scraper is known from its second scrape on: the first two render on their path.
# Figures: docs/decisions.md "Rendering ahead of the scrape".
# Usage: bench/prometheus_prerender.sh path/to/roce_qos_exporter [scrape_interval_s] [duration_s]
set -euo pipefail
exe=$(realpath "${1:?usage: $0 path/to/roce_qos_exporter [scrape_interval_s] [duration_s]}")
interval=${2:-15}
duration=${3:-300}
here=$(cd "$(dirname "$0")" && pwd)
command -v prometheus >/dev/null || { echo "apt-get install prometheus" >&2; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

exporter_port=9885 prometheus_port=9886
samples=$(((duration + 60) * 4))
python3 "$here/fleet/synth.py" --template "$here/fleet/node8/bundle.txt" --nodes 1 \
  --period 0.25 --samples "$samples" --out "$work/replay" --base-port "$exporter_port" >/dev/null
"$exe" --replay "$work/replay/node000.bundle" --web.listen-address=127.0.0.1:$exporter_port \
  2>"$work/exporter.log" &
pids+=($!)
for _ in $(seq 60); do
  curl -sf -o /dev/null "http://127.0.0.1:$exporter_port/-/ready" && break
  kill -0 "${pids[0]}" 2>/dev/null || break
  sleep 0.5
done
curl -sf -o /dev/null "http://127.0.0.1:$exporter_port/-/ready" ||
  { echo "the exporter did not come up:" >&2; tail -5 "$work/exporter.log" >&2; exit 1; }
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: ${interval}s
scrape_configs:
  - job_name: roce-qos-exporter
    static_configs:
      - targets: ['127.0.0.1:$exporter_port']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address=127.0.0.1:$prometheus_port >"$work/prometheus.log" 2>&1 &
pids+=($!)
# The measurement window itself, not synchronisation: Prometheus scrapes on its own clock.
sleep "$duration"
# What Prometheus stored from its last scrape: the body's counts are as of its render, so they
# cover the scrapes before that one.
query() {
  curl -sfG "http://127.0.0.1:$prometheus_port/api/v1/query" --data-urlencode "query=$1"
}
{
  query 'roce_exporter_scrapes_total'
  echo
  query 'roce_exporter_scrape_renders_total'
  echo
  query "count_over_time(up[${duration}s])"
  echo
} >"$work/answers"
python3 - "$interval" "$duration" "$work/answers" <<'PY'
import json, sys
interval, duration, path = sys.argv[1], sys.argv[2], sys.argv[3]
answers = [json.loads(line) for line in open(path) if line.strip()]
if any(not a["data"]["result"] for a in answers):
    sys.exit("Prometheus stored no scrape of the exporter (is port 9885 or 9886 taken?)")
value = lambda r: int(float(r["value"][1]))
bodies = {r["metric"]["body"]: value(r) for r in answers[0]["data"]["result"]}
renders = value(answers[1]["data"]["result"][0])
scrapes = value(answers[2]["data"]["result"][0])
counted = sum(bodies.values())
print(f"prometheus every {interval} s for {duration} s: {scrapes} scrapes; the last one's body "
      f"counts the {counted} before it: {bodies.get('prerendered', 0)} prerendered, "
      f"{bodies.get('waited', 0)} waited, {bodies.get('cached', 0)} cached, "
      f"{bodies.get('rendered', 0)} rendered on the scrape path")
print(f"renders: {renders}, {renders / counted:.1f} per scrape "
      f"(a new snapshot every 250 ms: {int(float(interval) * 4)} per interval)")
PY
