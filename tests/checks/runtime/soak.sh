#!/usr/bin/env bash
# The short soak in CI: tests/soak/run for ${SOAK_SECONDS:-60} s (device churn every second,
# SIGHUP reloads, constant scrapes; RSS/FD/thread growth, reloads applied, 0 stale series).
# The 30-minute run and its figures: docs/reliability.md. SOAK_SECONDS=0 skips it.
set -euo pipefail
source "$(dirname "$0")/../../common.bash"
seconds=${SOAK_SECONDS:-60}
((seconds > 0)) || { echo "soak: skipped (SOAK_SECONDS=0)"; exit 0; }
"$root/tests/soak/run" --duration "$seconds" "$(exporter_binary)"
