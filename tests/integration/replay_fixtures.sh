#!/usr/bin/env bash
# Replay of every committed capture (tests/fixtures/replay/<kernel>/, docs/capture.md) yields what
# the live run on that kernel produced, with no kernel access (no root, no devices):
#  * `--replay bundle.txt check --json` prints exactly live.check.json (the drift verdicts of the
#    live `check --json` before the capture) and exits with the same status;
#  * the same equals the bundle's own live.check_json (the capture run's check);
#  * a daemon started with --replay serves the same series (name and labels) as the live daemon's
#    /metrics (live.metrics), the same roce_qos_* values (QoS state and drift verdicts) and every
#    value of the capture run's own /metrics, except wall-clock timestamps and the exporter's self
#    metrics (roce_exporter_*), which describe the process, not the node;
#  * that daemon, at the default flags, logs no failure (no msg="failing"/"recovered", nothing at
#    level=error) and no roce_exporter_collect_errors_total series rises while its samples span
#    more than the discovery and QoS poll intervals (5 s): every call it makes is in the bundle.
# Usage: replay_fixtures.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
exe=${1:?usage: $0 path/to/roce_qos_exporter}
require_tools curl awk diff
fixtures=$(cd "$(dirname "$0")/../fixtures/replay" && pwd)
work=$(mktemp -d)
pid=
namespaces=()
trap cleanup_exporter_test EXIT

# meta BUNDLE KEY: a manifest value, percent-decoded.
meta() {
  local v
  v=$(awk -v k="$2" '$1 == "meta" && $2 == k { print $3; exit }' "$1")
  [[ $v == - ]] && v=
  printf '%b' "${v//%/\\x}"
}
# series FILE: "name{labels}" per sample line, without self metrics (the exporter's and its
# process's), timestamps, and what a bundle does not record (docs/capture.md): lldpd's answers,
# module pages and change notifications, which the live daemon may have seen before its scrape.
# Nor the link, PCIe and GID families: a replaying daemon runs none of the pollers that read them
# and no GID stage (docs/capture.md "Not carried"), so where the live one read a figure through
# netlink the replay has at most its ethtool -S fallback (another `source`).
series() { comparable "$1" | awk '{ print $1 }'; }
comparable() {
  grep -v '^#' "$1" | grep -Ev '^(roce_exporter_|process_)' |
    grep -Ev '^[a-z_]+_timestamp_seconds[{ ]' |
    grep -Ev '^(roce_lldp_|roce_transceiver_|roce_qos_change_notifications_total[{ ])' |
    grep -Ev '^(roce_link_|roce_pcie_|roce_rdma_gids|roce_roce_v2_gid_)' |
    LC_ALL=C sort
}
ready() { [[ -n ${port:-} ]] && curl -sf -o /dev/null "http://127.0.0.1:$port/-/ready"; }
listening() {
  port=$(sed -n 's/.*msg="listening" .* ports=\([0-9]*\).*/\1/p' "$work/exporter.log" | head -n1)
  [[ -n $port ]]
}
# last_sample FILE: the sample clock of a scrape (roce_exporter_last_sample_timestamp_seconds).
last_sample() { metric_value "$1" roce_exporter_last_sample_timestamp_seconds; }
# collect_errors FILE: every roce_exporter_collect_errors_total series with its value.
collect_errors() { grep '^roce_exporter_collect_errors_total{' "$1" | LC_ALL=C sort; }
# Samples taken SECONDS after the one in FILE (the daemon's own clock, not a sleep here).
samples_span() {
  curl -sf "http://127.0.0.1:$port/metrics" -o "$work/later.metrics" &&
    awk -v a="$(last_sample "$1")" -v b="$(last_sample "$work/later.metrics")" -v s="$2" \
      'BEGIN { exit !(a != "" && b != "" && b - a >= s) }'
}
# The series appear once the QoS stage has run; the first snapshot may precede it.
complete_scrape() {
  curl -sf "http://127.0.0.1:$port/metrics" -o "$work/replay.metrics" &&
    [[ $(series "$work/replay.metrics" | wc -l) -ge $(series "$1" | wc -l) ]]
}

# The replaying daemon of check_fixture failed nowhere: its log and its error counters.
check_no_failure() {
  local name=$1 logged
  logged=$(grep -E 'msg="(failing|recovered)"|level=error' "$work/exporter.log" | head -n 3 || true)
  [[ -z $logged ]] && pass "$name: the replaying daemon logs no failure" ||
    fail "$name: the replaying daemon logs failures: $logged"
  if [[ -z $(collect_errors "$work/replay.metrics") ]]; then
    fail "$name: no roce_exporter_collect_errors_total series to compare"
  elif diff <(collect_errors "$work/replay.metrics") <(collect_errors "$work/later.metrics") \
    >"$work/d"; then
    pass "$name: no roce_exporter_collect_errors_total series rises over $(($(metric_value \
      "$work/later.metrics" roce_exporter_samples_total) - $(metric_value "$work/replay.metrics" \
      roce_exporter_samples_total))) samples"
  else
    fail "$name: collect errors rise during the replay: $(grep '^>' "$work/d" | head -n 3)"
  fi
  local total
  total=$(collect_errors "$work/later.metrics" | awk '{ s += $2 } END { print s + 0 }')
  [[ $total == 0 ]] && pass "$name: every roce_exporter_collect_errors_total series is 0" ||
    fail "$name: $total collect errors: $(collect_errors "$work/later.metrics" | grep -v ' 0$' | head -n 3)"
}

check_fixture() {
  local dir=$1 name
  name=$(basename "$dir")
  local bundle=$dir/bundle.txt rc=0
  "$exe" --replay "$bundle" check --json >"$work/check.json" 2>"$work/check.err" || rc=$?
  if cmp -s "$dir/live.check.json" "$work/check.json"; then
    pass "$name: replayed check --json equals the live one"
  else
    fail "$name: replayed check --json differs: $(diff "$dir/live.check.json" "$work/check.json" | head -n 5)"
  fi
  [[ $rc == "$(cat "$dir/live.check.exit")" ]] && pass "$name: check exit status $rc as live" ||
    fail "$name: check exit $rc, live $(cat "$dir/live.check.exit")"
  meta "$bundle" live.check_json >"$work/capture.check.json"
  cmp -s "$work/capture.check.json" "$work/check.json" &&
    pass "$name: equals the capture run's own check" || fail "$name: differs from the capture's check"

  port=
  # Emptied here, not by the daemon's own redirection: that runs in the child, and a loaded
  # machine can let `listening` read the previous fixture's line (its port) before it does.
  : >"$work/exporter.log"
  # The default flags: the replay must answer every call the daemon makes with them.
  "$exe" --replay "$bundle" --web.listen-address=127.0.0.1:0 2>"$work/exporter.log" &
  pid=$!
  wait_for 20 "listening" listening && wait_for 20 "/-/ready" ready || {
    fail "$name: not ready (port '${port:-}': /-/ready answers $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:${port:-0}/-/ready"); samples $(curl -s --max-time 5 "http://127.0.0.1:${port:-0}/metrics" | grep '^roce_exporter_samples_total'))"
    return
  }
  meta "$bundle" live.metrics >"$work/capture.metrics"
  wait_for 20 "all series" complete_scrape "$dir/live.metrics" || true
  # Past the discovery and QoS poll intervals (5 s) and several idle-port periods (1 s).
  wait_for 30 "6 s of samples" samples_span "$work/replay.metrics" 6 ||
    fail "$name: the replaying daemon's samples never spanned 6 s"
  kill "$pid" && wait "$pid" || true
  pid=
  check_no_failure "$name"
  if diff <(series "$dir/live.metrics") <(series "$work/replay.metrics") >"$work/d"; then
    pass "$name: the same $(series "$work/replay.metrics" | wc -l) series as the live daemon"
  else
    fail "$name: series differ from the live daemon's: $(head -n 10 "$work/d")"
  fi
  # The QoS state and drift series of the live daemon, value for value (its traffic counters
  # moved on before the capture: the kernel's own IPv6 neighbour discovery goes through simnic).
  if diff <(comparable "$dir/live.metrics" | grep '^roce_qos_') \
    <(comparable "$work/replay.metrics" | grep '^roce_qos_') >"$work/d"; then
    pass "$name: every roce_qos_* value (state, drift) equals the live daemon's"
  else
    fail "$name: QoS values differ from the live daemon's: $(head -n 10 "$work/d")"
  fi
  # The capture run has no change monitor (roce_qos_monitor_up 0); the replaying daemon has one.
  # The ECN window signals exist once an interval has valid RDMA counters at both ends, which
  # depends on the sampling cadence (not carried, docs/capture.md): the capture run's few samples
  # may end before one.
  local unshared='^(roce_qos_monitor_up|roce_ecn_silent|roce_pfc_pauses_per_ecn_event|roce_cnp_to_ecn_ratio)[{ ]'
  if diff <(comparable "$work/capture.metrics" | grep -Ev "$unshared") \
    <(comparable "$work/replay.metrics" | grep -Ev "$unshared") >"$work/d"; then
    pass "$name: every value equals the capture run's /metrics"
  else
    fail "$name: values differ from the capture run's: $(head -n 10 "$work/d")"
  fi
}

found=0
for dir in "$fixtures"/*/; do
  [[ -f $dir/bundle.txt ]] || continue
  found=$((found + 1))
  check_fixture "${dir%/}"
done
((found > 0)) || fail "no capture under $fixtures"
finish replay_fixtures
