#!/usr/bin/env bash
# The one-shot command line as an operator meets it (docs/check.md, docs/capture.md):
#  * `policy show-defaults` (a typo) names the word it did not know, exit 2;
#  * `capture --output` into a missing directory fails at once with the path and the reason;
#  * `check` writes no info lines on stderr (warnings and errors only, unless --log.level);
#  * a selected device no policy rule checks is "not checked", in text and --json, never "in sync";
#  * a capture records its --collector.device-include, so `--replay FILE check` selects what was
#    captured without the flag;
#  * `check --help` lists the daemon flags check reads, and each of them works with check;
#    `policy --help` has a usage line without CLI11's "[]";
#  * a flag given twice is a usage error naming it (exit 2), a repeatable one (--netdev) is not;
#  * `policy validate FILE...`: OK and exit 0 for the shipped policies, the error with file:line:column
#    and exit 1 for a bad one, a warning for a rule that never applies, exit 2 without FILE.
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
grep -q 'policy: unknown subcommand "show-defaults" (known: show-default, validate)' typo.err &&
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

# --- check --help: the daemon's flags that check reads are listed, and each one is accepted.
run checkhelp check --help
[[ $rc == 0 ]] && pass "check --help: exit 0" || fail "check --help: exit $rc"
listed=$(sed -n '/^Flags of the daemon that check reads/,$p' checkhelp.out | grep -oE '^  --[a-z.-]+' | tr -d ' ')
for flag in --config --collector.device-include --collector.device-exclude --replay --lldp.socket \
  --lldp.library --lldp.interval --qos.configfs-tos --path.procfs --path.debugfs --log.level \
  --log.format; do
  grep -qx -- "$flag" <<<"$listed" && pass "check --help lists $flag" || fail "check --help does not list $flag: $(cat checkhelp.out)"
done
# Each listed flag, with a value of its kind, is taken by check (an unknown or refused flag is a
# usage error, exit 2, naming it; lo is checked and not checked by any rule: exit 0).
cp "$root/deploy/policy/policy.example.yaml" policy.yaml
node_capture=node.capture
for flag in $listed; do
  case "$flag" in
    --config) value=policy.yaml ;;
    --collector.device-include) value=lo ;;
    --collector.device-exclude) value=nothing ;;
    --replay) value=$node_capture ;;
    --lldp.socket) value=/nonexistent/lldpd.socket ;;
    --lldp.library) value=/nonexistent/liblldpctl.so.4 ;;
    --lldp.interval) value=0 ;;
    --qos.configfs-tos) value= ;;
    --path.procfs) value=/proc ;;
    --path.debugfs) value=/sys/kernel/debug ;;
    --log.level) value=error ;;
    --log.format) value=json ;;
    *) fail "check --help lists $flag, which this test does not know: add it"; continue ;;
  esac
  args=(check --netdev lo "$flag")
  [[ -n "$value" ]] && args=(check --netdev lo "$flag=$value")
  run listed "${args[@]}"
  [[ $rc != 2 ]] && pass "check takes $flag${value:+=$value} (exit $rc)" ||
    fail "check $flag${value:+=$value}: exit 2: $(cat listed.err listed.out)"
done

# --- policy --help: a usage line a person can follow.
run policyhelp policy --help
usage=$(grep '^Usage:' policyhelp.out || true)
[[ "$usage" == "Usage: roce_qos_exporter policy [OPTIONS] SUBCOMMAND" ]] &&
  pass "policy --help: $usage" || fail "policy --help usage line: '$usage'"
grep -qE '^  validate ' policyhelp.out && pass "policy --help lists validate" ||
  fail "policy --help does not list validate: $(cat policyhelp.out)"
run validatehelp policy validate --help
grep -qx 'Usage: roce_qos_exporter policy validate \[OPTIONS\] FILE\.\.\.' validatehelp.out &&
  pass "policy validate --help: usage names FILE" || fail "policy validate --help: $(head -3 validatehelp.out)"

# --- a flag given twice: refused, named; a repeatable one is not.
run twice --sampler.period=1s --sampler.period=2s check --netdev lo
[[ $rc == 2 ]] && grep -qx 'roce_qos_exporter: --sampler.period given twice: give it once (see --help)' twice.err &&
  pass "--sampler.period twice: exit 2, named" || fail "--sampler.period twice: exit $rc: $(cat twice.err)"
run twicecfg check --config policy.yaml --netdev lo --config policy.yaml
[[ $rc == 2 ]] && grep -q -- '--config given twice' twicecfg.err &&
  pass "--config twice after check: exit 2, named" || fail "--config twice: exit $rc: $(cat twicecfg.err)"
run twicejson check --netdev lo --json --json
[[ $rc == 2 ]] && grep -q -- '--json given twice' twicejson.err &&
  pass "check --json twice: exit 2, named" || fail "--json twice: exit $rc: $(cat twicejson.err)"
run thrice --log.level=info --log.level=warn --log.level=error check --netdev lo
grep -q -- '--log.level given 3 times' thrice.err && pass "a flag three times: named with its count" ||
  fail "--log.level three times: exit $rc: $(cat thrice.err)"
grep -q 'At Most' twice.err twicecfg.err twicejson.err thrice.err &&
  fail "CLI11's 'At Most 1 required' wording leaked" || pass "no CLI11 'At Most' wording"
run netdevs check --netdev lo --netdev lo --json
[[ $rc == 0 ]] && pass "--netdev is repeatable (exit 0)" || fail "--netdev twice: exit $rc: $(cat netdevs.err)"

# --- policy validate FILE: no device, no kernel access.
for shipped in deploy/policy/policy.example.yaml deploy/kubernetes/base/policy.yaml; do
  run valid policy validate "$root/$shipped"
  [[ $rc == 0 ]] && grep -q "^$root/$shipped: OK (" valid.out && [[ ! -s valid.err ]] &&
    pass "policy validate $shipped: OK, exit 0" || fail "policy validate $shipped: exit $rc: $(cat valid.out valid.err)"
done
printf 'version: 1\ndefaults:\n  trust: dscp\n  pfc: [3, 9]\n' >bad.yaml
run invalid policy validate bad.yaml
[[ $rc == 1 ]] && grep -qx 'bad.yaml:4:[0-9]*: .*priority 9.*' invalid.err && [[ ! -s invalid.out ]] &&
  pass "a priority out of range: exit 1, $(cat invalid.err)" || fail "bad.yaml: exit $rc: $(cat invalid.out invalid.err)"
printf 'version: 1\ndevices:\n  - name: gpu\n    match: {netdev: "ens.*"}\n    policy: {pfc: [3]}\n  - name: gpu-first-port\n    match: {netdev: "ens.*", pci: "0000:3b:00.0"}\n    policy: {pfc: [4]}\n' >shadow.yaml
run shadow policy validate shadow.yaml
[[ $rc == 0 ]] && grep -q '^shadow.yaml: OK (defaults and 2 device rules: "gpu" at line 3, "gpu-first-port" at line 6)$' shadow.out &&
  grep -qx 'shadow.yaml:6: warning: rule "gpu-first-port" never applies: rule "gpu" (line 3) comes first and matches every device it matches' shadow.out &&
  pass "a rule that never applies: warned with its line, exit 0" || fail "shadow.yaml: exit $rc: $(cat shadow.out shadow.err)"
run several policy validate "$root/deploy/policy/policy.example.yaml" bad.yaml shadow.yaml
[[ $rc == 1 ]] && [[ $(grep -c ': OK (' several.out) == 2 ]] && grep -q '^bad.yaml:4:' several.err &&
  pass "several files: each judged, exit 1 when one is invalid" ||
  fail "several files: exit $rc: $(cat several.out several.err)"
run missing policy validate /nonexistent/policy.yaml
[[ $rc == 1 ]] && grep -q '/nonexistent/policy.yaml' missing.err &&
  pass "a missing file: exit 1, named" || fail "missing file: exit $rc: $(cat missing.err)"
run nofile policy validate
[[ $rc == 2 ]] && grep -q 'FILE' nofile.err && pass "no FILE: usage error, exit 2" ||
  fail "no FILE: exit $rc: $(cat nofile.err)"
run typo2 policy valdate x.yaml
[[ $rc == 2 ]] && grep -q 'unknown subcommand "valdate" (known: show-default, validate)' typo2.err &&
  pass "policy valdate: the typo is named" || fail "policy valdate: exit $rc: $(cat typo2.err)"

finish cli_surface
