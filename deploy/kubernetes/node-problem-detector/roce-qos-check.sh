#!/bin/sh
# node-problem-detector custom plugin: the RoceQosDrift node condition from
# `roce_qos_exporter check` (docs/deployment.md "Node condition on QoS drift").
#
# NPD's contract (pkg/custompluginmonitor/plugin/plugin.go): exit 0 = OK, 1 = NonOK, anything else
# = Unknown; stdout, whitespace-trimmed and cut at pluginConfig.max_output_length bytes, becomes
# the condition's message. `check` exits 0 in sync, 1 drift, 2 could not check: mapped 1:1, and
# every other outcome (binary missing, killed, timed out) is Unknown, never "in sync".
# The message is one line that fits max_output_length (roce-qos-monitor.json: 200), so NPD never
# cuts it mid-word: "drift on 2 of 8: ens1f0np0 pfc,dscp_prio; ens1f1np1 pfc".
#
# Arguments go to `check` (e.g. --config=/etc/roce-qos-exporter/policy.yaml).
# Environment: ROCE_QOS_EXPORTER (binary; default roce_qos_exporter on PATH),
#   ROCE_QOS_CHECK_TIMEOUT (seconds, default 8: below the rule's 10 s timeout, so a hung check
#   is reported here as Unknown with a reason instead of being killed by NPD),
#   ROCE_QOS_MESSAGE_MAX (bytes, default 200 = max_output_length).
exe=${ROCE_QOS_EXPORTER:-roce_qos_exporter}
limit=${ROCE_QOS_CHECK_TIMEOUT:-8}
max=${ROCE_QOS_MESSAGE_MAX:-200}

# say TEXT: one line of at most $max bytes; a cut is marked with "...".
say() {
  printf '%s\n' "$1" | tr -s '\n\t' '  ' | awk -v max="$max" '{
    sub(/^ +/, ""); sub(/ +$/, "")
    if (length($0) > max) $0 = substr($0, 1, max - 3) "..."
    print
  }'
}

if ! command -v "$exe" >/dev/null 2>&1; then
  say "unknown: $exe not found (set ROCE_QOS_EXPORTER or PATH)"
  exit 2
fi
report=$(timeout "$limit" "$exe" check "$@" 2>&1)
status=$?

case $status in
  0)
    # "N devices: ..." or "no RoCE device selected ...".
    say "in sync: $(printf '%s\n' "$report" | grep -E '^(no RoCE device|[0-9]+ devices?(:|$))' | head -n 2)"
    exit 0
    ;;
  1)
    # Device headlines "<netdev> (...): DRIFT in N of M fields", then field lines
    # "  <field>  DRIFT ...": list the drifted fields per device (UNVERIFIED fields, whose source
    # the device lacks, are not drift).
    summary=$(printf '%s\n' "$report" | awk '
      /^[0-9]+ devices?(:|$)/ { total = $1; next }
      /^[^ ].*: DRIFT in / { dev = $1; devs++; order[devs] = dev; next }
      /^[^ ].*: / { dev = ""; next }
      dev != "" && $2 == "DRIFT" { f[dev] = f[dev] (f[dev] == "" ? "" : ",") $1 }
      END {
        out = ""
        for (i = 1; i <= devs; i++) out = out (i > 1 ? "; " : "") order[i] " " f[order[i]]
        printf "drift on %d of %s: %s", devs, total == "" ? "?" : total, out
      }')
    say "$summary"
    exit 1
    ;;
  124 | 143)
    say "unknown: roce_qos_exporter check did not finish within ${limit}s"
    exit 2
    ;;
  *)
    # The reason `check` gave: its "roce_qos_exporter check: ..." line (log records, "ts=...",
    # may come first), else the last line of output.
    reason=$(printf '%s\n' "$report" | grep -m1 '^roce_qos_exporter\( check\)\?: ' |
      sed 's/^roce_qos_exporter\( check\)\?: //')
    [ -n "$reason" ] || reason=$(printf '%s\n' "$report" | grep -v '^policy: ' | grep . | tail -n 1)
    say "unknown (check exit $status): ${reason:-no output}"
    exit 2
    ;;
esac
