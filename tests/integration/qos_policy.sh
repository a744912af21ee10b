#!/usr/bin/env bash
# The QoS policy through the real binary (docs/policy.md):
#  * `policy show-default` is a policy file `--config` accepts;
#  * every bad policy (malformed YAML, wrong type, out-of-range priority/DSCP, unknown key, empty
#    file, ETS not summing to 100) is refused with "<file>:<line>:<col>: ..." and a non-zero exit,
#    by `check` (exit 2, nothing checked) and by the daemon (exit 1, one error line, never serves);
#  * `check` exit codes: 1 on drift (loopback has no DCB), 2 on an unknown --netdev, 2 with the
#    reason on stderr when --collector.device-include selects nothing; include selects like the
#    daemon (lo by regex) and a repeated --netdev is checked once; --json carries exit_code;
#  * SIGHUP and POST /-/reload keep the last good policy when the new one is bad, and say so in
#    roce_qos_policy_reload_success (needs root for a private network namespace; skipped otherwise);
#  * observe mode (`check`) works with no capability at all; --remediation=enforce without
#    CAP_NET_ADMIN refuses to start.
# Usage: qos_policy.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
exe=$(realpath "$1")
tmp=$(mktemp -d)
ns=""
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [[ -n "$ns" ]] && ip netns del "$ns" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"

echo "== show-default round trip"
"$exe" policy show-default > default.yaml || die "show-default exited $?"
grep -q '^  pfc: \[3\]$' default.yaml || die "show-default lacks pfc: [3]"
set +e
"$exe" check --config default.yaml --netdev lo > out.txt 2> err.txt
rc=$?
set -e
[[ $rc == 0 ]] || die "check with the shown default on lo: exit $rc, want 0 (the defaults cover Mellanox PFs only)"$'\n'"$(cat err.txt)"
grep -q '^policy: default.yaml$' out.txt || die "check did not use default.yaml"
grep -q 'policy rule "none"' out.txt || die "lo should match no rule: $(cat out.txt)"
# A rule applies the defaults to loopback: no DCB, no RDMA port, no MOFED sysfs there, so those
# fields cannot be verified, which is not drift. tcp_ecn is asked to be what the host has, so
# nothing verifiable differs: exit 0, with every unverifiable field said plainly.
host_tcp_ecn=$(cat /proc/sys/net/ipv4/tcp_ecn)
printf 'defaults: {tcp_ecn: %s}\ndevices:\n  - name: loopback\n    match: {netdev: lo}\n' \
  "$host_tcp_ecn" > lo.yaml
set +e
"$exe" check --config lo.yaml --netdev lo > out.txt 2> err.txt
rc=$?
set -e
[[ $rc == 0 ]] || die "check with a rule for lo: exit $rc, want 0 (nothing verifiable differs)"$'\n'"$(cat out.txt err.txt)"
grep -Eq '^  trust +UNVERIFIED expected dscp$' out.txt || die "check output lacks the unverifiable trust field"
grep -q 'lo (.*): in sync (8 fields cannot be verified on this device)' out.txt ||
  die "check verdict does not count the unverifiable fields: $(cat out.txt)"
# A verifiable difference is drift, whatever cannot be verified.
printf 'defaults: {tcp_ecn: %s}\ndevices:\n  - name: loopback\n    match: {netdev: lo}\n' \
  "$(( host_tcp_ecn == 1 ? 2 : 1 ))" > lo-drift.yaml
set +e
"$exe" check --config lo-drift.yaml --netdev lo > out.txt 2> err.txt
rc=$?
set -e
[[ $rc == 1 ]] || die "check with a tcp_ecn difference: exit $rc, want 1 (drift)"$'\n'"$(cat out.txt err.txt)"
grep -q 'DRIFT in 1 of 9 fields (8 fields cannot be verified on this device)' out.txt ||
  die "drift verdict wrong: $(cat out.txt)"

echo "== observe mode needs no capability"
set +e
setpriv --inh-caps=-all --bounding-set=-all "$exe" check --config lo.yaml --netdev lo > out.txt 2> err.txt
rc=$?
set -e
[[ $rc == 0 ]] || die "check without any capability: exit $rc, want 0 (in sync, not an error): $(cat err.txt)"
grep -Eq '^  trust +UNVERIFIED expected dscp$' out.txt || die "check without capabilities did not read DCB"

echo "== check exit code on an unknown device"
set +e
"$exe" check --netdev no-such-dev0 > out.txt 2> err.txt
rc=$?
set -e
[[ $rc == 2 ]] || die "check --netdev no-such-dev0: exit $rc, want 2"
grep -q 'no network device "no-such-dev0"' err.txt || die "unknown device not named: $(cat err.txt)"

echo "== check selects like the daemon; nothing selected is exit 2"
set +e
"$exe" check --collector.device-include='no-such-dev[0-9]+' > out.txt 2> err.txt
rc=$?
set -e
[[ $rc == 2 ]] || die "check selecting nothing: exit $rc, want 2"$'\n'"$(cat out.txt err.txt)"
grep -q 'no RoCE device selected (no netdev matches --collector.device-include="no-such-dev\[0-9\]+"' err.txt ||
  die "nothing selected not explained: $(cat err.txt)"
set +e
"$exe" check --config lo.yaml --collector.device-include='l.' > out.txt 2> err.txt
rc=$?
set -e
[[ $rc == 0 ]] || die "check --collector.device-include='l.': exit $rc, want 0"$'\n'"$(cat out.txt err.txt)"
grep -q '^1 device: ' out.txt || die "include regex did not select exactly lo: $(cat out.txt)"
set +e
"$exe" check --config lo.yaml --netdev lo --netdev lo --json > out.txt 2> err.txt
rc=$?
set -e
[[ $rc == 0 ]] || die "check --json on lo: exit $rc, want 0"$'\n'"$(cat out.txt err.txt)"
grep -q '"summary":{"checked":1,"in_sync":1,"drift":0,"unknown":0,"not_checked":0,"unconfigured":0},"exit_code":0}' out.txt ||
  die "check --json twice lo: $(cat out.txt)"

echo "== bad policies are refused with file, line and reason"
bad() {  # name, expected "line:col: text" prefix regex, content
  local name=$1 want=$2
  printf '%s' "$3" > "$name.yaml"
  set +e
  "$exe" check --config "$name.yaml" --netdev lo > out.txt 2> err.txt
  local rc=$?
  set -e
  [[ $rc == 2 ]] || die "$name: check exit $rc, want 2"
  [[ ! -s out.txt ]] || die "$name: check printed a report for an invalid policy"
  grep -Eq "invalid policy, nothing checked: $name\\.yaml:$want" err.txt ||
    die "$name: check stderr does not name $name.yaml:$want: $(cat err.txt)"

  set +e
  timeout 20 "$exe" --config "$name.yaml" --web.listen-address 127.0.0.1:0 > out.txt 2> err.txt
  rc=$?
  set -e
  [[ $rc != 0 && $rc != 124 ]] || die "$name: the daemon exited $rc (want a refusal, not success or a hang)"
  [[ $(grep -c 'level=error' err.txt) == 1 ]] || die "$name: want exactly one error line: $(cat err.txt)"
  grep -Eq "level=error msg=\"cannot start the QoS engine\" error=\"invalid QoS policy, not starting: $name\\.yaml:$want" err.txt ||
    die "$name: daemon error does not name $name.yaml:$want: $(cat err.txt)"
  ! grep -q 'msg="listening"' err.txt || die "$name: the daemon started serving"
}
bad malformed '3:1: malformed YAML: end of sequence flow not found' $'defaults:\n  pfc: [3\n'
bad wrong_type '2:8: pfc must be a list' $'defaults:\n  pfc: "3"\n'
bad quoted_number '2:9: pfc: priority must be an integer, got a string' $'defaults:\n  pfc: ["3"]\n'
bad prio_range '2:12: pfc: priority 8 is out of range 0..7' $'defaults:\n  pfc: [3, 8]\n'
bad dscp_range '2:22: dscp_prio: DSCP 64 is out of range 0..63' $'defaults:\n  dscp_prio: {26: 3, 64: 3}\n'
bad unknown_key '2:3: defaults: unknown key \\?"pcf' $'defaults:\n  pcf: [3]\n'
bad empty '1:1: empty policy' ''
bad ets_sum '3:5: ets.bandwidth of the ETS TCs sums to 90' \
  $'defaults:\n  ets:\n    tsa: [ets, ets, ets, ets, ets, ets, ets, ets]\n    bandwidth: [10, 10, 10, 10, 10, 10, 10, 20]\n'

echo "== enforce mode without CAP_NET_ADMIN refuses to start"
set +e
timeout 20 setpriv --inh-caps=-net_admin --bounding-set=-net_admin "$exe" --remediation=enforce \
  --config default.yaml --web.listen-address 127.0.0.1:0 > out.txt 2> err.txt
rc=$?
set -e
[[ $rc == 1 ]] || die "enforce without CAP_NET_ADMIN: exit $rc, want 1: $(cat err.txt)"
grep -q 'needs CAP_NET_ADMIN' err.txt || die "no clear capability message: $(cat err.txt)"

echo "== reload keeps the last good policy"
if [[ $(id -u) != 0 ]] || ! command -v ip > /dev/null; then
  echo "SKIP reload part: needs root for a private network namespace"
  exit 0
fi
ns="roceqos-it-qos-$$"
veth_rule=$'devices:\n  - {name: veths, match: {netdev: "qit.*"}}\n'
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add qit0 type veth peer name qit1
# The defaults cover Mellanox PFs only: a rule applies them to the veths of the namespace.
printf 'defaults:\n  tcp_ecn: 2\n%s' "$veth_rule" > policy.yaml
ip netns exec "$ns" "$exe" --config policy.yaml --web.listen-address 127.0.0.1:0 --web.enable-lifecycle \
  --collector.device-include 'qit.*' --qos.poll-interval 200ms 2> daemon.log &
pid=$!
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*msg="listening" .* ports=\([0-9]*\).*/\1/p' daemon.log)
  [[ -n "$port" ]] && break
  sleep 0.1
done
[[ -n "$port" ]] || die "the daemon did not start: $(cat daemon.log)"
metric() { ip netns exec "$ns" curl -fsS "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
wait_metric() {  # name value: poll until the exported value equals it (deadline 10 s)
  for _ in $(seq 100); do
    [[ "$(metric "$1")" == "$2" ]] && return 0
    sleep 0.1
  done
  die "$1 never became $2 (last: $(metric "$1"))"
}
wait_metric roce_qos_policy_reload_success 1
wait_metric 'roce_qos_drift{netdev="qit0",field="tcp_ecn"}' 0  # a new netns has tcp_ecn=2

printf 'defaults:\n  tcp_ecn: 7\n%s' "$veth_rule" > policy.yaml  # invalid
kill -HUP "$pid"
wait_metric roce_qos_policy_reload_success 0
grep -q 'policy reload rejected, keeping the last good policy' daemon.log || die "no reload log line"
wait_metric 'roce_qos_drift{netdev="qit0",field="tcp_ecn"}' 0  # still the old policy
code=$(ip netns exec "$ns" curl -s -o reload.txt -w '%{http_code}' -X POST "http://127.0.0.1:$port/-/reload")
[[ $code == 500 ]] || die "POST /-/reload of a bad policy answered $code"
grep -q 'policy.yaml:2:12: tcp_ecn 7 is out of range 0..2' reload.txt || die "reload answer: $(cat reload.txt)"

printf 'defaults:\n  tcp_ecn: 1\n%s' "$veth_rule" > policy.yaml  # valid; the netns has 2: drift
code=$(ip netns exec "$ns" curl -s -o reload.txt -w '%{http_code}' -X POST "http://127.0.0.1:$port/-/reload")
[[ $code == 200 ]] || die "POST /-/reload of a good policy answered $code: $(cat reload.txt)"
wait_metric roce_qos_policy_reload_success 1
wait_metric 'roce_qos_drift{netdev="qit0",field="tcp_ecn"}' 1
echo "PASS"
