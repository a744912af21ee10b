# Helpers shared by the check suites (tests/checks/*/*.sh), the host integration tests
# (tests/integration/*.sh), the soak run and the e2e host script: one pass/fail/finish for all.
# Sourced, never run: scripts/test-all runs tests/checks/*/*.sh and CTest registers
# tests/integration/*.sh only. Every wait polls a condition with a deadline; nothing sleeps in
# place of synchronisation.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
failures=0

pass() { echo "ok: $*"; }
# fail counts a failed check and goes on, so one run reports every failure; finish decides.
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# die: a failure the rest of the script cannot go on from.
die() {
  fail "$@"
  exit 1
}
skip() {
  echo "SKIP: $*"
  exit 77  # CTest SKIP_RETURN_CODE
}
finish() {
  local name=$1
  if ((failures)); then
    echo "$name: $failures check(s) failed" >&2
    exit 1
  fi
  echo "$name: all checks passed"
}

require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps)"
  done
}

# Prints the exporter binary's path (scripts/build puts it under exporter/).
exporter_binary() {
  local candidate
  for candidate in "$build_dir/roce_qos_exporter" "$build_dir/exporter/roce_qos_exporter"; do
    if [[ -x "$candidate" ]]; then
      echo "$candidate"
      return 0
    fi
  done
  echo "no roce_qos_exporter under $build_dir (run scripts/build)" >&2
  return 1
}

# Sets known_flags (the long flags the exporter accepts, one per line, from its --help) and
# known_flags_source.
known_flags=""
known_flags_source=""
load_known_flags() {
  [[ -n "$known_flags" ]] && return 0
  local exe
  exe=$(exporter_binary) || return 1
  known_flags_source="$exe --help"
  known_flags=$("$exe" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9._-]*' | sort -u)
  [[ -n "$known_flags" ]]
}

# check_flags CONTEXT FLAG...: every --flag (value stripped) must be one the exporter accepts.
check_flags() {
  local context=$1 flag name
  shift
  load_known_flags || {
    fail "$context: cannot list the exporter's flags"
    return
  }
  for flag in "$@"; do
    name=${flag%%=*}
    if grep -qxF -- "$name" <<<"$known_flags"; then
      pass "$context: $name is accepted ($known_flags_source)"
    else
      fail "$context: $name is not a flag of roce_qos_exporter ($known_flags_source)"
    fi
  done
}

# cleanup_exporter_test: EXIT trap of the exporter tests. On failure shows $work/exporter.log,
# then stops the exporter ($pid), deletes the network namespaces in $namespaces and removes $work.
# An exporter that exits non-zero on SIGTERM fails the test, saying so with its log's tail (under
# set -e a bare `wait` once failed a test with no word).
cleanup_exporter_test() {
  local rc=$? n status=0
  if ((rc != 0 && rc != 77)) && [[ -s "$work/exporter.log" ]]; then
    echo "---- exporter log" >&2
    cat "$work/exporter.log" >&2
  fi
  if [[ -n "${pid:-}" ]] && kill "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || status=$?
    if ((status != 0)); then
      echo "FAIL: the exporter (pid $pid) exited with status $status on SIGTERM; its log's tail:" >&2
      tail -n 20 "$work/exporter.log" 2>/dev/null >&2 || true
    fi
  fi
  for n in "${namespaces[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
  ((status == 0)) || exit "$status"
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
