#!/usr/bin/env bash
# The exposition helpers of tests/testbed/guest/lib.sh (metric_series, metric_from, metric_label,
# metric), wait_for and ibdev_of, without the VM: every testbed scenario's verdict goes through
# them, so a helper that silently finds nothing turns an assertion into a skip or a false failure.
# Runs the cases under dash (Debian's /bin/sh) and, when installed, busybox sh (the guest's
# shell) against tests/checks/lib/testbed-lib.prom; `scrape` is stubbed to copy that file. Also:
# the kernel list (tests/testbed/kernel/series) is consistent and kernel/fetch refuses a series
# outside it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)

cases() {
  cat <<'CASES'
set -u
lib=$1 fixture=$2
TESTBED_WORK=$(mktemp -d)
trap 'rm -rf "$TESTBED_WORK"' EXIT
. "$lib"
scrape() { cp "$fixture" "${1:-$METRICS}"; }
failures=0
check() {  # check WHAT EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else
    echo "FAIL: $1: expected '$2', got '$3'" >&2; failures=$((failures + 1)); fi
}
# Unlabelled series (the bug: `read _l _v` shifted the value of " 42" into the label field).
check "metric_from unlabelled" 42 "$(metric_from "$fixture" roce_exporter_samples_total)"
check "metric unlabelled" 42 "$(metric roce_exporter_samples_total)"
check "metric_from unlabelled, timestamp ignored" 1.5e+06 \
  "$(metric_from "$fixture" roce_exporter_up_seconds)"
check "metric_series unlabelled" " 42" "$(metric_series "$fixture" roce_exporter_samples_total)"
check "unlabelled series has no labels to match" 1 \
  "$(metric_from "$fixture" roce_exporter_samples_total netdev=sim0 >/dev/null; echo $?)"
# Labelled series: label order in the exposition does not matter; all pairs must match.
check "metric_from labelled rx" 7 \
  "$(metric_from "$fixture" roce_pfc_pause_frames_total netdev=sim0 direction=rx)"
check "metric_from labelled tx (labels in another order)" 9 \
  "$(metric_from "$fixture" roce_pfc_pause_frames_total prio=3 netdev=sim0 direction=tx)"
check "metric labelled" 11 "$(metric roce_pfc_pause_frames_total netdev=sim1)"
check "metric_series sorts labels" "direction=tx,netdev=sim0,prio=3 9" \
  "$(metric_series "$fixture" roce_pfc_pause_frames_total | sed -n 2p)"
check "no matching series is status 1" 1 \
  "$(metric_from "$fixture" roce_pfc_pause_frames_total netdev=sim9 >/dev/null; echo $?)"
check "unknown name is status 1" 1 "$(metric_from "$fixture" roce_nope_total >/dev/null; echo $?)"
check "several matches fail the scenario" "FAIL: metric roce_pfc_pause_frames_total{netdev=sim0} matches several series" \
  "$( (metric_from "$fixture" roce_pfc_pause_frames_total netdev=sim0) 2>&1 >/dev/null)"
check "metric_label" mlx5_1 "$(metric_label "$fixture" roce_device_info device netdev=sim1)"
# assert_no_negative: a negative counter or any NaN fails; a module's temperature and thresholds
# are signed quantities (a -5 °C low alarm is a threshold, not a bug).
neg=$TESTBED_WORK/neg.prom
printf '%s\n' 'roce_transceiver_threshold{netdev="sim0",monitor="temperature",kind="low_alarm"} -5' \
  'roce_transceiver_temperature_celsius{netdev="sim0"} -1.5' 'roce_pfc_pause_frames_total 3' >"$neg"
check "assert_no_negative: signed module gauges pass" 0 "$( (assert_no_negative "$neg") 2>/dev/null; echo $?)"
echo 'roce_pfc_pause_frames_total{netdev="sim0"} -1' >>"$neg"
check "assert_no_negative: a negative counter fails" 1 "$( (assert_no_negative "$neg") 2>/dev/null; echo $?)"
echo 'roce_transceiver_temperature_celsius{netdev="sim1"} NaN' >"$neg"
check "assert_no_negative: NaN fails, signed or not" 1 "$( (assert_no_negative "$neg") 2>/dev/null; echo $?)"
# wait_for: done as soon as CMD succeeds; a CMD that never does fails once the seconds passed.
tries=0
third_try() { tries=$((tries + 1)); [ "$tries" -ge 3 ]; }
wait_for 5 third_try
check "wait_for: 0 on CMD's third try, which ends the polling" "0 3" "$? $tries"
uptime_cs
t0=$_cs
wait_for 1 false
rc=$?
uptime_cs
check "wait_for 1 false: 1, after at least 1 s" "1 yes" "$rc $([ $((_cs - t0)) -ge 100 ] && echo yes)"
# ibdev_of: the RDMA device of a netdev from `rdma link show` (iproute2's line: DEV/PORT, then
# key/value pairs, the netdev last); a netdev whose name is a prefix of another's is not matched.
fake_rdma() {
  echo 'link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev sim0'
  echo 'link mlx5_1/1 state DOWN physical_state DISABLED netdev sim1'
  echo 'link rxe0/1 state ACTIVE physical_state LINK_UP netdev sim10'
}
RDMA=fake_rdma
check "ibdev_of sim1" mlx5_1 "$(ibdev_of sim1)"
check "ibdev_of sim10 (sim1 is a prefix)" rxe0 "$(ibdev_of sim10)"
check "ibdev_of a netdev without RDMA is empty" "" "$(ibdev_of eth0)"
exit "$failures"
CASES
}

status=0
shells=(dash)
command -v busybox >/dev/null && shells+=("busybox sh")
for shell in "${shells[@]}"; do
  echo "== $shell"
  $shell -c "$(cases)" testbed-lib "$root/tests/testbed/guest/lib.sh" \
    "$root/tests/checks/lib/testbed-lib.prom" || status=1
done

# The kernel list (tests/testbed/kernel/series) is what kernel/fetch accepts: the default and the
# matrix kernels are supported series, and a series outside it is refused before any download.
echo "== kernel/series"
kernel=$root/tests/testbed/kernel
all=" $("$kernel/series" all) "
for k in $("$kernel/series" default) $("$kernel/series" matrix); do
  if [[ $all == *" $k "* ]]; then echo "ok: $k is a supported series"; else
    echo "FAIL: $k (default or matrix) is not in 'series all':$all" >&2; status=1; fi
done
[[ $("$kernel/series" default | wc -w) == 1 ]] && echo "ok: one default series" ||
  { echo "FAIL: not exactly one default series: $("$kernel/series" default)" >&2; status=1; }
out=$("$kernel/fetch" --kernel 4.19 2>&1) && rc=0 || rc=$?
if [[ $rc == 2 && $out == *"unknown kernel series '4.19' (${all:1:-1})"* ]]; then
  echo "ok: kernel/fetch refuses a series outside the list (exit 2)"
else
  echo "FAIL: kernel/fetch --kernel 4.19 exited $rc: $out" >&2; status=1
fi
exit "$status"
