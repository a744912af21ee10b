# Helpers for tests/integration/*.sh (sourced; not a test itself: CTest registers only *.sh).
# Every wait polls a condition with a deadline; nothing sleeps in place of synchronisation.

failures=0
pass() { echo "PASS: $*"; }
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
skip() {
  echo "SKIP: $*"
  exit 77  # CTest SKIP_RETURN_CODE
}
finish() {
  if ((failures)); then
    echo "$1: $failures check(s) failed" >&2
    exit 1
  fi
  echo "$1: all checks passed"
}

# cleanup_exporter_test: EXIT trap of the exporter tests. On failure shows $work/exporter.log,
# then stops the exporter ($pid), deletes the network namespaces in $namespaces and removes $work.
cleanup_exporter_test() {
  local rc=$? n
  if ((rc != 0 && rc != 77)) && [[ -s "$work/exporter.log" ]]; then
    echo "---- exporter log" >&2
    cat "$work/exporter.log" >&2
  fi
  [[ -n "${pid:-}" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  for n in "${namespaces[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}

# wait_for SECONDS DESCRIPTION COMMAND...: runs COMMAND every 50 ms until it succeeds or the
# deadline passes; returns 1 (and says what it waited for) on timeout.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      echo "timed out after ${seconds}s waiting for: $what" >&2
      return 1
    fi
    sleep 0.05
  done
}

# metric_value FILE SERIES: the value of the sample line whose series (name{labels}) is exactly
# SERIES, or nothing.
metric_value() {
  awk -v key="$2" '$1 == key { print $2; exit }' "$1"
}

require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps)"
  done
}
