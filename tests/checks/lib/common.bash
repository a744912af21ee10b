# Helpers shared by the deploy checks (tests/checks/{dashboards,kubernetes,systemd,dockerfile}.sh).
# Sourced, never run: scripts/test-all runs tests/checks/*.sh only.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
pass() { echo "ok: $*"; }

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

# Sets known_flags (the long flags the exporter accepts, one per line) and known_flags_source.
# Source of truth is `roce_qos_exporter --help`; while the binary is the skeleton's placeholder
# (its --help lists no flags) the documented surface in docs/contributing.md is used instead, and
# every message says so.
known_flags=""
known_flags_source=""
load_known_flags() {
  [[ -n "$known_flags" ]] && return 0
  local exe help
  exe=$(exporter_binary) || return 1
  help=$("$exe" --help 2>&1 || true)
  if grep -q -- '--web.listen-address' <<<"$help"; then
    known_flags_source="$exe --help"
    known_flags=$(grep -oE -- '--[a-z][a-z0-9._-]*' <<<"$help" | sort -u)
  else
    known_flags_source="docs/contributing.md: the binary's --help lists no flags yet"
    known_flags=$(sed -n '/^- Flags/,/^- Metric names/p' "$root/docs/contributing.md" |
      grep -oE -- '--[a-z][a-z0-9._-]*' | sort -u)
  fi
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

finish() {
  local name=$1
  if ((failures)); then
    echo "$name: $failures check(s) failed" >&2
    exit 1
  fi
  echo "$name: all checks passed"
}
