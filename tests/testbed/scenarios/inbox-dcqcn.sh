# shellcheck shell=sh
# The inbox mlx5 driver's DCQCN parameters (docs/policy.md "DCQCN parameters"): simnic loaded with
# mofed_sysfs=0 has no MOFED ecn/ tree, only <debugfs>/mlx5/<pci>/cc_params/ as mlx5_ib makes it.
#  * without --path.debugfs: no roce_qos_dcqcn_param series, cnp_dscp and dcqcn_params absent;
#  * with it: roce_qos_dcqcn_param{role,param} (MOFED names) equals every debugfs file, and the CNP
#    marking comes from np_cnp_dscp/np_cnp_prio;
#  * a change made in debugfs behind the exporter's back (rp_ai_rate, np_cnp_prio) is drift, and
#    `check --path.debugfs` says so (exit 1);
#  * enforce writes the debugfs files back to the policy (and np_cnp_prio_mode returns to 0).
require exporter simnic
simnic_load_ports 1 mofed_sysfs=0
sim=$(simnic_netdevs | sed -n 1p)
ibdev=$(ibdev_of "$sim")
pci=$(basename "$(readlink "/sys/class/net/$sim/device")")
cc=/sys/kernel/debug/mlx5/$pci/cc_params
[ -d "$cc" ] || fail "simnic mofed_sysfs=0 made no $cc"
[ ! -e "/sys/class/net/$sim/ecn" ] || fail "simnic mofed_sysfs=0 still has /sys/class/net/$sim/ecn"

# The embedded default policy's state, with the CNP marking where the inbox driver keeps it, plus
# two DCQCN parameters the policy names.
dcb pfc set dev "$sim" prio-pfc all:off 3:on
dcb app add dev "$sim" dscp-prio 24:3 26:3 48:6
echo 48 >"$cc/np_cnp_dscp"
echo 6 >"$cc/np_cnp_prio"
echo 106 >"/sys/class/infiniband/$ibdev/tc/1/traffic_class"
sysctl -qw net.ipv4.tcp_ecn=1
policy=$TESTBED_WORK/policy.yaml
"$EXPORTER" policy show-default |
  sed 's/^  dcqcn_params: null$/  dcqcn_params: {roce_rp: {rpg_ai_rate: 5}, roce_np: {min_time_between_cnps: 4}}/' \
    >"$policy" || fail "cannot write $policy"
grep -q 'rpg_ai_rate: 5' "$policy" || fail "the default policy has no 'dcqcn_params: null' line to replace"
echo 5 >"$cc/rp_ai_rate"
echo 4 >"$cc/np_min_time_between_cnps"

common="--collector.device-include=^$sim\$ --config=$policy"
# shellcheck disable=SC2086
start_exporter $common --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms
scrape "$TESTBED_WORK/plain.prom"
[ -z "$(metric_series "$TESTBED_WORK/plain.prom" roce_qos_dcqcn_param)" ] ||
  fail "roce_qos_dcqcn_param without --path.debugfs"
assert_num_eq 1 "$(metric_from "$TESTBED_WORK/plain.prom" roce_qos_observed_absent netdev="$sim" field=dcqcn_params)" \
  "dcqcn_params absent without --path.debugfs"
stop_exporter

# shellcheck disable=SC2086
start_exporter $common --path.debugfs=/sys/kernel/debug --qos.poll-interval=500ms \
  --qos.dcqcn-poll-interval=500ms
params_read() { [ -n "$(metric roce_qos_dcqcn_param netdev="$sim" role=roce_rp param=rpg_gd)" ]; }
wait_for 10 params_read || fail "no roce_qos_dcqcn_param from $cc within 10 s"
scrape "$TESTBED_WORK/inbox.prom"
# Every debugfs file against its series (the MOFED name of each, docs/kernel-interfaces.md §7.4).
while read -r file role param; do
  assert_num_eq "$(cat "$cc/$file")" \
    "$(metric_from "$TESTBED_WORK/inbox.prom" roce_qos_dcqcn_param netdev="$sim" role="$role" param="$param")" \
    "$param from $file"
done <<'MAP'
rp_clamp_tgt_rate roce_rp clamp_tgt_rate
rp_clamp_tgt_rate_ati roce_rp clamp_tgt_rate_after_time_inc
rp_time_reset roce_rp rpg_time_reset
rp_byte_reset roce_rp rpg_byte_reset
rp_threshold roce_rp rpg_threshold
rp_ai_rate roce_rp rpg_ai_rate
rp_max_rate roce_rp rpg_max_rate
rp_hai_rate roce_rp rpg_hai_rate
rp_min_dec_fac roce_rp rpg_min_dec_fac
rp_min_rate roce_rp rpg_min_rate
rp_rate_to_set_on_first_cnp roce_rp rate2set_fcnp
rp_dce_tcp_g roce_rp dce_tcp_g
rp_dce_tcp_rtt roce_rp dce_tcp_rtt
rp_rate_reduce_monitor_period roce_rp rreduce_mperiod
rp_initial_alpha_value roce_rp initial_alpha_value
rp_gd roce_rp rpg_gd
np_min_time_between_cnps roce_np min_time_between_cnps
np_cnp_prio_mode roce_np cnp_prio_mode
MAP
# The CNP marking has its own families.
assert_num_eq "$(cat "$cc/np_cnp_dscp")" "$(metric_from "$TESTBED_WORK/inbox.prom" roce_qos_cnp_dscp netdev="$sim")" \
  "roce_qos_cnp_dscp from np_cnp_dscp"
assert_num_eq "$(cat "$cc/np_cnp_prio")" "$(metric_from "$TESTBED_WORK/inbox.prom" roce_qos_cnp_prio netdev="$sim")" \
  "roce_qos_cnp_prio from np_cnp_prio"
assert_num_eq 1 "$(metric_from "$TESTBED_WORK/inbox.prom" roce_qos_in_sync netdev="$sim")" "in sync"

# A person changes two parameters in debugfs (CNPs follow the triggering packet's priority).
echo 20 >"$cc/rp_ai_rate"
echo 1 >"$cc/np_cnp_prio_mode"
echo 3 >"$cc/np_cnp_prio"
echo 1 >"$cc/np_cnp_prio_mode"
drifted() { num_eq 1 "$(metric roce_qos_dcqcn_param_drift netdev="$sim" role=roce_rp param=rpg_ai_rate)"; }
wait_for 10 drifted || fail "rp_ai_rate 20 (policy 5) not reported as drift within 10 s"
assert_num_eq 1 "$(metric roce_qos_drift netdev="$sim" field=cnp_802p_prio)" "cnp_802p_prio drift"
stop_exporter
# shellcheck disable=SC2086
"$EXPORTER" check $common --path.debugfs=/sys/kernel/debug >"$TESTBED_WORK/check.txt" 2>&1
rc=$?
assert_eq 1 "$rc" "check exit status on drift ($(tr '\n' ' ' <"$TESTBED_WORK/check.txt"))"
grep -q 'rpg_ai_rate' "$TESTBED_WORK/check.txt" || fail "check does not name rpg_ai_rate: $(cat "$TESTBED_WORK/check.txt")"

# shellcheck disable=SC2086
start_exporter $common --path.debugfs=/sys/kernel/debug --remediation=enforce \
  --remediation.backoff=1s --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
  --remediation.state-file="$TESTBED_WORK/remediation.json" \
  --remediation.lock-file="$TESTBED_WORK/enforce.lock"
restored() { [ "$(cat "$cc/rp_ai_rate")" = 5 ] && [ "$(cat "$cc/np_cnp_prio")" = 6 ]; }
wait_for 30 restored || fail "enforce did not restore rp_ai_rate=5/np_cnp_prio=6 (now $(cat "$cc/rp_ai_rate")/$(cat "$cc/np_cnp_prio"))"
assert_eq 0 "$(cat "$cc/np_cnp_prio_mode")" "np_cnp_prio_mode after the np_cnp_prio write"
synced() { num_eq 1 "$(metric roce_qos_in_sync netdev="$sim")"; }
wait_for 10 synced || fail "not in sync after enforce"
exporter_alive
stop_exporter
echo "INBOX_DCQCN params=20 rp_ai_rate=$(cat "$cc/rp_ai_rate") np_cnp_prio=$(cat "$cc/np_cnp_prio") check_rc=$rc"
