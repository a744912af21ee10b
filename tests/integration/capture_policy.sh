#!/usr/bin/env bash
# A capture carries its policy and the flags that shape the check (docs/capture.md "What a
# capture carries"), through the real binary on this host's loopback (no root, no devices):
#  * `capture --config P --path.procfs D --collector.device-include=lo` embeds P's content and the
#    flags; with P deleted, `--replay FILE check --json` prints the capture run's own check, exits
#    with its status (1: tcp_ecn 2 in D against the policy's 1), and logs one line naming the
#    policy and the flags it took;
#  * an explicit --config overrides the captured policy, with a log line naming both;
#  * a bundle that names a --config but lacks its content (written before captures carried it) is
#    refused with the reason (exit 2), and replays with --config.
# Usage: capture_policy.sh path/to/roce_qos_exporter
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
# meta BUNDLE KEY: a manifest value, percent-decoded.
meta() {
  local v
  v=$(awk -v k="$2" '$1 == "meta" && $2 == k { print $3; exit }' "$1")
  [[ $v == - ]] && v=
  printf '%b' "${v//%/\\x}"
}

# A procfs of the test's own, so the drift does not depend on this host's tcp_ecn.
mkdir -p proc/sys/net/ipv4
echo 2 >proc/sys/net/ipv4/tcp_ecn
printf 'defaults: {tcp_ecn: 1}\ndevices:\n  - name: loopback\n    match: {netdev: lo}\n' >drift.yaml
printf 'defaults: {tcp_ecn: 2}\ndevices:\n  - name: loopback\n    match: {netdev: lo}\n' >sync.yaml
cp drift.yaml policy.yaml

run capture capture --output node.capture --samples 1 --sampler.period=100ms \
  --collector.device-include=lo --config policy.yaml --path.procfs="$work/proc"
[[ $rc == 0 ]] && pass "capture with --config: exit 0" || die "capture: exit $rc: $(cat capture.err)"
[[ $(meta node.capture live.check_exit) == 1 ]] && pass "the capture run's check found drift" ||
  fail "the capture run's check exit is $(meta node.capture live.check_exit), expected 1"
meta node.capture capture.policy >captured.yaml
cmp -s captured.yaml drift.yaml && pass "the bundle holds the policy's content" ||
  fail "capture.policy differs from the file: $(diff drift.yaml captured.yaml | head -n 5)"
[[ $(meta node.capture capture.procfs_path) == "$work/proc" ]] &&
  pass "the bundle records --path.procfs" || fail "no capture.procfs_path in the bundle"
rm policy.yaml

run replay --replay node.capture check --json
meta node.capture live.check_json >capture.json
[[ $rc == 1 ]] && pass "replayed check: exit 1 as captured" || fail "replayed check: exit $rc: $(cat replay.err)"
cmp -s capture.json replay.out && pass "replayed check --json equals the capture run's" ||
  fail "replayed check differs: $(diff capture.json replay.out | head -n 5)"
grep -q '"policy":"policy.yaml"' replay.out && pass "the report names the captured policy" ||
  fail "the report names another policy: $(head -c 200 replay.out)"
said=$(grep -c 'msg="replaying a capture"' replay.err || true)
[[ $said == 1 ]] && pass "one log line says what the replay took" ||
  fail "$said 'replaying a capture' lines: $(cat replay.err)"
grep 'msg="replaying a capture"' replay.err |
  grep -q "policy=policy.yaml policy_from=capture captured_flags=\"--collector.device-include=lo --path.procfs=$work/proc\"" &&
  pass "it names the policy and the flags from the capture" || fail "log line: $(cat replay.err)"

run override --replay node.capture --config sync.yaml check --json
[[ $rc == 0 ]] && pass "--config sync.yaml overrides the captured policy: exit 0" ||
  fail "override: exit $rc: $(cat override.out override.err)"
grep -q 'msg="--config overrides the captured policy" config=sync.yaml captured_config=policy.yaml' \
  override.err && pass "the override is logged with both policies" ||
  fail "no override line: $(cat override.err)"

grep -v '^meta capture.policy ' node.capture >old.capture
run old --replay old.capture check
[[ $rc == 2 ]] && pass "a bundle without its policy's content: exit 2" || fail "old bundle: exit $rc"
grep -qx "roce_qos_exporter: --replay old.capture: captured with --config policy.yaml, whose content the bundle does not hold (written before captures carried their policy); name that policy with --config" old.err &&
  pass "the refusal says why and what to do" || fail "old bundle error: $(cat old.err)"
run old_config --replay old.capture --config drift.yaml check
[[ $rc == 1 ]] && pass "the same bundle with --config: exit 1" ||
  fail "old bundle with --config: exit $rc: $(cat old_config.err)"

finish capture_policy
