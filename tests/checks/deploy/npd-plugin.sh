#!/usr/bin/env bash
# Checks deploy/kubernetes/node-problem-detector/ offline (the drift case on a simulated ConnectX is
# tests/testbed/scenarios/npd-plugin.sh):
#  1. roce-qos-monitor.json loads as NPD's custom plugin monitor would load it
#     (tests/checks/lib/npd_plugin.py: keys, types, Go durations, rule timeout <= global timeout,
#     the permanent rule's condition exists, the rule's path is the executable wrapper), and
#     planted mistakes in it are each reported;
#  2. the wrapper, invoked as NPD invokes it (timeout, 4 KiB stdout, trim, cut at
#     max_output_length, exit code -> OK/NonOK/Unknown), with the real binary in a private network
#     namespace (no device; an invalid policy; an unknown --netdev) and with stand-ins for what
#     the host cannot produce (a drift report, 40 drifted devices, a hung check, a crash, no
#     binary): every outcome maps to the right status and a message that fits.
set -euo pipefail
source "$(dirname "$0")/../../common.bash"

dir=$root/deploy/kubernetes/node-problem-detector
config=$dir/roce-qos-monitor.json
npd=$root/tests/checks/lib/npd_plugin.py
exe=$(exporter_binary)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The config, and planted mistakes.
if out=$(python3 "$npd" validate "$config" "$dir"); then
  pass "roce-qos-monitor.json is a valid custom plugin monitor config"
else
  fail "roce-qos-monitor.json: $out"
fi
max=$(jq -r '.pluginConfig.max_output_length' "$config")
grep -q "ROCE_QOS_MESSAGE_MAX:-$max}" "$dir/roce-qos-check.sh" &&
  pass "the wrapper's message limit is max_output_length ($max)" ||
  fail "roce-qos-check.sh's default ROCE_QOS_MESSAGE_MAX is not max_output_length $max"
planted() { # LABEL JQ_FILTER EXPECTED_ERROR_TEXT
  jq "$2" "$config" >"$work/planted.json"
  if out=$(python3 "$npd" validate "$work/planted.json" "$dir"); then
    fail "planted $1 was accepted"
  elif grep -qF -- "$3" <<<"$out"; then
    pass "planted $1 is reported: $(grep -F -- "$3" <<<"$out" | head -1 | sed 's/^[^:]*: //')"
  else
    fail "planted $1: expected '$3', got: $out"
  fi
}
planted "plugin name" '.plugin = "kmsg"' 'NPD supports only "custom"'
planted "rule timeout above the global one" '.rules[0].timeout = "20s"' 'greater than the global timeout'
planted "condition without default" '.rules[0].condition = "RoceQosDirft"' 'has no default condition'
planted "misspelt key" '.pluginConfig.invoke_intreval = "30s" | del(.pluginConfig.invoke_interval)' "unknown pluginConfig key 'invoke_intreval'"
planted "bad duration" '.pluginConfig.invoke_interval = "30 s"' "pluginConfig.invoke_interval: '30 s'"
planted "rule type" '.rules[0].type = "perm"' 'is not temporary or permanent'
planted "missing plugin" '.rules[0].path = "/config/plugin/nope.sh"' 'no nope.sh in'
planted "string max_output_length" '.pluginConfig.max_output_length = "200"' 'max_output_length'
echo '{"plugin": "custom",' >"$work/truncated.json"
python3 "$npd" validate "$work/truncated.json" "$dir" >"$work/out" 2>&1 &&
  fail "a truncated JSON file was accepted" || pass "a truncated JSON file is rejected: $(head -1 "$work/out")"

# 2. Invocations. npd_run [ARGS_JSON]: one NPD run of the rule, "<status>\t<message>".
npd_run() {
  jq --argjson args "${1:-[]}" '.rules[0].args = $args' "$config" >"$work/run.json"
  python3 "$npd" run "$work/run.json" "$dir"
}
expect_run() { # LABEL STATUS MESSAGE_REGEX RESULT
  local status=${4%%$'\t'*} message=${4#*$'\t'}
  if [[ "$status" == "$2" && "$message" =~ $3 && ${#message} -le $max ]]; then
    pass "$1: $status \"$message\""
  else
    fail "$1: expected $2 with /$3/ (<= $max bytes), got $status \"$message\" (${#message} bytes)"
  fi
}

export ROCE_QOS_EXPORTER=$exe
# Nothing selected is exit 2 ("could not check"): the condition is Unknown, never a false OK.
expect_run "real check, no device (private netns)" Unknown '^unknown \(check exit 2\): .*no RoCE device' \
  "$(unshare --net python3 "$npd" run "$config" "$dir")"
printf 'version: 1\ndefaults:\n  pfc: [9]\n' >"$work/bad-policy.yaml"
expect_run "real check, invalid policy" Unknown "^unknown \\(check exit 2\\): invalid policy.*bad-policy.yaml:3" \
  "$(unshare --net bash -c "$(declare -f npd_run); work=$work config=$config npd=$npd dir=$dir npd_run '[\"--config=$work/bad-policy.yaml\"]'")"
expect_run "real check, unknown --netdev" Unknown '^unknown \(check exit 2\): .*nosuch0' \
  "$(unshare --net bash -c "$(declare -f npd_run); work=$work config=$config npd=$npd dir=$dir npd_run '[\"--netdev\", \"nosuch0\"]'")"

# Stand-ins for the binary: the report format of exporter/check.cc RenderCheckReport.
stub() { # NAME EXIT BODY...
  local name=$1 code=$2
  shift 2
  { echo '#!/bin/sh'; printf '%s\n' "$@"; echo "exit $code"; } >"$work/$name"
  chmod +x "$work/$name"
}
drift_report() { # DEVICES: "name field,field" per argument, then the in-sync count
  local synced=$1 d f
  shift
  echo "policy: embedded default"
  for d in "$@"; do
    f=${d#* }
    echo ""
    echo "${d%% *} (pf 0000:3b:00.0, mlx5_0/1, up): DRIFT in $(tr ',' '\n' <<<"$f" | wc -l) of 7 fields"
    echo '  policy rule "default" (fingerprint 5e0c), state fingerprint 91ab'
    echo "  trust      ok          dscp"
    for field in ${f//,/ }; do
      printf '  %-10s %-11s expected [3]\n  %-10s %-11s actual   []\n  %-22s why: lossy\n' "$field" DRIFT "" "" ""
    done
  done
  for ((i = 0; i < synced; i++)); do printf '\nsync%d (pf 0000:3c:00.%d, mlx5_9/1, up): in sync\n  pfc        ok          [3]\n' $i $i; done
  echo ""
  local parts=""
  ((synced)) && parts="$synced in sync"
  ((synced)) && (($#)) && parts+=", "
  (($#)) && parts+="$# with drift"
  echo "$(($# + synced)) devices: $parts"
}
drift_report 1 "ens1f0np0 pfc,dscp_prio" "ens1f1np1 roce_tos" >"$work/drift.txt"
stub drift 1 "cat '$work/drift.txt'"
expect_run "drift report" NonOK \
  '^drift on 2 of 3: ens1f0np0 pfc,dscp_prio; ens1f1np1 roce_tos$' "$(ROCE_QOS_EXPORTER=$work/drift npd_run)"
mapfile -t many < <(for i in $(seq 40); do echo "ens${i}f0np0 pfc,dscp_prio,roce_tos"; done)
drift_report 0 "${many[@]}" >"$work/many.txt"
stub many 1 "cat '$work/many.txt'"
expect_run "40 drifted devices (cut by the wrapper)" NonOK \
  '^drift on 40 of 40: ens1f0np0 pfc,dscp_prio,roce_tos; .*\.\.\.$' "$(ROCE_QOS_EXPORTER=$work/many npd_run)"
stub unverified 1 "printf 'policy: x\n\nsim0 (pf, up): DRIFT in 1 of 3 fields\n  buffer     UNVERIFIED  expected x\n  pfc        DRIFT       expected [3]\n  mtu        ok          4200\n\n1 device: 1 with drift\n'"
expect_run "an UNVERIFIED field is not listed as drift" NonOK '^drift on 1 of 1: sim0 pfc$' \
  "$(ROCE_QOS_EXPORTER=$work/unverified npd_run)"
stub hang 0 "sleep 30"
expect_run "hung check" Unknown \
  '^unknown: roce_qos_exporter check did not finish within 1s$' "$(ROCE_QOS_EXPORTER=$work/hang ROCE_QOS_CHECK_TIMEOUT=1 npd_run)"
stub crash 139 "echo 'policy: embedded default'"
expect_run "crashed check" Unknown '^unknown \(check exit 139\): no output$' "$(ROCE_QOS_EXPORTER=$work/crash npd_run)"
expect_run "no binary" Unknown '^unknown: .*/missing not found' "$(ROCE_QOS_EXPORTER=$work/missing npd_run)"
# NPD's own timeout (10 s) is never reached: the wrapper's 8 s limit answers first, with a reason.
rule_timeout=$(jq -r '.rules[0].timeout' "$config")
grep -q 'ROCE_QOS_CHECK_TIMEOUT:-8}' "$dir/roce-qos-check.sh" && [[ "$rule_timeout" == 10s ]] &&
  pass "the wrapper's 8 s check limit is below the rule's $rule_timeout timeout" ||
  fail "the wrapper's check limit is not below the rule timeout $rule_timeout"

finish npd-plugin
