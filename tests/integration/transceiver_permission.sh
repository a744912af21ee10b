#!/usr/bin/env bash
# Observe mode has no CAP_NET_ADMIN, which module EEPROM reads need (docs/transceiver.md): the
# exporter run as uid 65534 with no capability says so with roce_exporter_transceiver_permission_denied
# 1 and one warning naming the fix, logged once however many rounds are refused.
# Usage: transceiver_permission.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
exe=$(realpath "${1:?usage: $0 path/to/roce_qos_exporter}")
require_tools curl setpriv
[[ $(id -u) -eq 0 ]] || skip "needs root to drop to uid 65534 without capabilities"
work=$(mktemp -d)
chmod 755 "$work"
pid=
namespaces=()
trap cleanup_exporter_test EXIT

setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
  "$exe" --web.listen-address=127.0.0.1:0 --collector.device-include=lo \
  --transceiver.interval=1s 2>"$work/exporter.log" &
pid=$!
listening() {
  port=$(sed -n 's/.*msg="listening" .* ports=\([0-9]*\).*/\1/p' "$work/exporter.log" | head -n1)
  [[ -n $port ]]
}
# Three rounds (one a second) read lo's module EEPROM: each refused with EPERM before the driver.
three_rounds() {
  curl -sf "http://127.0.0.1:$port/metrics" -o "$work/metrics" &&
    [[ $(metric_value "$work/metrics" roce_exporter_transceiver_reads_total) -ge 3 ]]
}
wait_for 20 "listening" listening && wait_for 20 "three transceiver rounds" three_rounds ||
  { fail "no three transceiver rounds"; finish transceiver_permission; }

[[ $(metric_value "$work/metrics" 'roce_exporter_transceiver_read_errors_total{reason="permission"}') -ge 3 ]] &&
  pass "every read counted under reason=permission" || fail "permission errors: $(grep read_errors "$work/metrics")"
[[ $(metric_value "$work/metrics" roce_exporter_transceiver_permission_denied) == 1 ]] &&
  pass "roce_exporter_transceiver_permission_denied 1" ||
  fail "permission_denied: $(grep permission_denied "$work/metrics")"
warnings=$(grep -c 'msg="transceiver reads refused for permission"' "$work/exporter.log" || true)
[[ $warnings == 1 ]] && pass "one warning for three refused rounds" || fail "$warnings warnings"
grep 'msg="transceiver reads refused for permission"' "$work/exporter.log" |
  grep -q 'needs=CAP_NET_ADMIN fix=".*optics.conf.*--transceiver.interval=0' &&
  pass "the warning names the fix" || fail "warning: $(grep 'refused for permission' "$work/exporter.log")"

kill "$pid" && wait "$pid" || true
pid=
finish transceiver_permission
