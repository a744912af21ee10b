#!/usr/bin/env bash
# The sampling cost in model time (docs/performance.md "In model time"): the adaptive-sampling
# scenario, measuring only (CHECK=0), at 8 simnic ports and FW_US (default 2000) per statistics
# read, with STORMS (default 3) storms confirmed per state. Prints its ADAPTIVE_SAMPLING lines:
# per state the exported (wall) and model-time duty cycle and the modelled firmware reads per
# port per second, then each storm's confirmation time. Exit status: the testbed runner's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
script=$(mktemp --suffix=.sh)
trap 'rm -f "$script"' EXIT
{
  echo "FW_US=${FW_US:-2000}; CHECK=0; STORMS=${STORMS:-3}"
  cat "$root/tests/testbed/scenarios/adaptive-sampling.sh"
} >"$script"
out=$(mktemp)
trap 'rm -f "$script" "$out"' EXIT
status=0
TESTBED_SCENARIO_TIMEOUT=${TESTBED_SCENARIO_TIMEOUT:-300} "$root/tests/testbed/run" -v --script "$script" >"$out" 2>&1 ||
  status=$?
grep -o 'ADAPTIVE_SAMPLING .*' "$out" || { tail -n 20 "$out" >&2; exit 1; }
exit "$status"
