#!/usr/bin/env bash
# The one-shot command line as an operator meets it (docs/check.md, docs/capture.md):
#  * `policy show-defaults` (a typo) names the word it did not know, exit 2;
#  * `capture --output` into a missing directory fails at once with the path and the reason;
#  * `check` writes no info lines on stderr (warnings and errors only, unless --log.level);
#  * a selected device no policy rule checks is "not checked", in text and --json, never "in sync";
#  * a capture records its --collector.device-include, so `--replay FILE check` selects what was
#    captured without the flag.
# Usage: cli_surface.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
exe=$(realpath "${1:?usage: $0 path/to/roce_qos_exporter}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# run NAME ARGS...: runs the exporter, keeps stdout in NAME.out, stderr in NAME.err, status in rc.
run() {
  local name=$1
  shift
  rc=0
  "$exe" "$@" >"$name.out" 2>"$name.err" || rc=$?
}

run typo policy show-defaults
[[ $rc == 2 ]] && pass "policy show-defaults: exit 2" || fail "policy show-defaults: exit $rc"
grep -q 'policy: unknown subcommand "show-defaults" (known: show-default)' typo.err &&
  pass "the typo is named" || fail "the typo is not named: $(cat typo.err)"

run output capture --output /nonexistent/x --collector.device-include=lo
[[ $rc == 2 ]] && pass "capture to a missing directory: exit 2" || fail "capture: exit $rc"
grep -qx 'roce_qos_exporter capture: --output /nonexistent/x: No such file or directory' output.err &&
  pass "capture names the path and the reason" || fail "capture error: $(cat output.err)"

# lo is no Mellanox PF: the embedded default's rules do not apply to it (policy rule none).
run text check --collector.device-include=lo
[[ $rc == 0 ]] && pass "check of an unchecked device: exit 0" || fail "check: exit $rc: $(cat text.out text.err)"
grep -q '^lo (other.*): not checked (no policy field applies)$' text.out &&
  pass "lo is reported not checked" || fail "lo not reported not checked: $(cat text.out)"
grep -q '^1 device: 1 not checked (no policy field applies)$' text.out &&
  pass "the summary counts it as not checked" || fail "summary: $(tail -n 1 text.out)"
[[ ! -s text.err ]] && pass "check wrote nothing on stderr" || fail "check stderr: $(cat text.err)"

run json check --collector.device-include=lo --json
grep -q '"netdev":"lo",.*"policy_rule":"none","roce_port":null,"verdict":"not_checked"' json.out &&
  pass "--json: verdict not_checked" || fail "--json: $(cat json.out)"

run capture capture --output node.capture --samples 1 --sampler.period=100ms \
  --collector.device-include=lo
[[ $rc == 0 ]] && pass "capture of lo: exit 0" || fail "capture: exit $rc: $(cat capture.err)"
grep -qx 'meta capture.device_include lo' node.capture &&
  pass "the bundle records the include regex" || fail "no capture.device_include in the bundle"
run replay --replay node.capture check --json
grep -q '"devices":\[{"netdev":"lo"' replay.out &&
  pass "--replay FILE check selects what was captured" ||
  fail "replayed check selected something else (exit $rc): $(cat replay.out replay.err)"
run override --replay node.capture check --json --collector.device-include=nothing-here
[[ $rc == 2 ]] && grep -q '"devices":\[\]' override.out &&
  pass "the command line's selection wins over the bundle's" ||
  fail "override: exit $rc: $(cat override.out override.err)"

finish cli_surface
