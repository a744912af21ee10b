# shellcheck shell=sh
# Enforce writes net.ipv4.tcp_ecn where --path.procfs says the host's procfs is (docs/policy.md,
# `tcp_ecn`; a container mounts the host's /proc elsewhere, and its own /proc/sys is read-only):
#  * <dir>/sys/net/ipv4/tcp_ecn holds 0 (drifted from the embedded default policy's 1), the real
#    /proc/sys/net/ipv4/tcp_ecn holds 2, a value no policy here asks for;
#  * the enforcer, started with --path.procfs=<dir>, reports the drift it reads under <dir>;
#  * the fix lands in <dir>/sys/net/ipv4/tcp_ecn (1), while the real file keeps 2 the whole time:
#    it is sampled at every poll until the fix, and once more after the enforcer stopped.
# The simnic port is put in the default policy's state first, so tcp_ecn is its only drift.
require exporter simnic
sim=$(simnic_netdevs | sed -n 1p)
ibdev=$(ibdev_of "$sim")
[ -n "$ibdev" ] || fail "no RDMA device on $sim"
real=/proc/sys/net/ipv4/tcp_ecn

policy=$TESTBED_WORK/policy.yaml
"$EXPORTER" policy show-default >"$policy" || fail "policy show-default failed"
simnic_conform_default_policy "$sim" "$ibdev"
procfs=$TESTBED_WORK/hostproc
mkdir -p "$procfs/sys/net/ipv4" || fail "mkdir $procfs"
echo 0 >"$procfs/sys/net/ipv4/tcp_ecn"
# After simnic_conform_default_policy (which sets the real one to the policy's 1).
sysctl -qw net.ipv4.tcp_ecn=2 || fail "cannot set the real tcp_ecn"
assert_eq 2 "$(cat "$real")" "real tcp_ecn before the start"

fake_ecn() { tr -d ' \n' <"$procfs/sys/net/ipv4/tcp_ecn"; }
real_changed=
# One observation per call: notes any change of the real file, succeeds once the fake one is fixed
# or the real one was written (then waiting longer shows nothing more).
watch_ecn() {
  _r=$(cat "$real")
  [ "$_r" = 2 ] || real_changed="$real_changed $_r@$(awk -v t="$t0" '{ printf "%.1f", $1 - t }' /proc/uptime)s"
  [ "$(fake_ecn)" = 1 ] || [ -n "$real_changed" ]
}

t0=$(cut -d' ' -f1 /proc/uptime)
start_exporter --collector.device-include="^$sim\$" --config="$policy" --remediation=enforce \
  --remediation.backoff=1s --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
  --path.procfs="$procfs" \
  --remediation.state-file="$TESTBED_WORK/remediation.json" \
  --remediation.lock-file="$TESTBED_WORK/enforce.lock"
wait_for 30 watch_ecn || log "neither file changed within 30 s"
# The worker's counts reach /metrics with the snapshot after the one that shows the device in sync;
# a write to the real file after the fake one was fixed would come before that.
count() { metric roce_qos_remediations_total netdev="$sim" field=tcp_ecn result="$1" || echo 0; }
counted() { num_eq 1 "$(metric roce_qos_in_sync netdev="$sim")" && num_eq 1 "$(count success)"; }
[ "$(fake_ecn)" = 1 ] && { wait_for 10 counted || log "not in sync with the fix counted within 10 s"; }
watch_ecn || true
exporter_alive
fixes=$(count success)
failed=$(count failed)
mismatch=$(count mismatch)
stop_exporter
watch_ecn || true
echo "ENFORCE_PROCFS fake_tcp_ecn=$(fake_ecn) real_tcp_ecn=$(cat "$real") real_changes=${real_changed:-none}" \
  "tcp_ecn_success=$fixes failed=$failed mismatch=$mismatch"
[ -z "$real_changed" ] || fail "the real $real was written (was 2; seen:$real_changed), not $procfs/sys/net/ipv4/tcp_ecn"
assert_eq 1 "$(fake_ecn)" "$procfs/sys/net/ipv4/tcp_ecn after enforce (was 0, policy 1)"
assert_num_eq 1 "$fixes" "tcp_ecn fixes counted (success)"
