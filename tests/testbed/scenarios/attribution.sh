# shellcheck shell=sh
# Attribution (docs/attribution.md): two jobs on two NICs, each holding QPs, named by their owners.
# Soft-RoCE over each of two simnic ports (rxa on A, rxb on B: simnic's own RDMA device holds no
# QP), processes holding QPs on each (ibv_rc_pingpong servers waiting for a peer):
#  - a pod (kubelet's systemd-driver path, containerd scope) on A, with its /var/log/pods directory;
#  - a Slurm job (slurmstepd's cgroup v2 path) on B;
#  - a process in no pod, job or unit (the root cgroup) on A.
# The oracle is `rdma resource show qp` (iproute2) and /proc/PID/cgroup: per RDMA device, the QPs
# of each job's PIDs and the kernel's own (comm "[module]"). Asserted:
#  1. roce_workload_qps names exactly the pod (ml/trainer-0, its UID) on A and the job (4242) on B,
#     with the oracle's counts, the kernel's QPs under kind="kernel", the unowned process as
#     kind="unknown", and nothing of either job on the other NIC;
#  2. a PFC storm on A: roce_pfc_storm on A only, while the pod's series stays (what the alerts
#     join, alerts/tests/workload_test.yaml);
#  3. the pod's processes exit: its series is gone within two rounds, the job's stays;
#  4. the poller's own counters: reads per round, no read error.
require exporter simnic rxe

# shellcheck disable=SC2046 # netdev names, one word each
set -- $(simnic_netdevs)
[ $# -ge 2 ] || fail "need two simnic ports, got '$*'"
a=$1 b=$2
workload_rxe "$a" 192.168.81.1 rxa
workload_rxe "$b" 192.168.82.1 rxb
uid=6f1c2a4e-0d5b-4c1e-9a57-3b8f0e2d7c11
pod_cg=$(workload_pod_cgroup ml trainer-0 "$uid")
job_cg=$(workload_slurm_cgroup 4242)
workload_qps "$pod_cg" rxa 7001 pod
workload_qps "$pod_cg" rxa 7002 pod
workload_qps "$job_cg" rxb 7003 job
workload_qps /sys/fs/cgroup rxa 7004 stray

# The oracle: rdma resource show, per RDMA device, for each job's PIDs and the kernel's own QPs.
# qps_of_device IBDEV: every QP of the device, on any port or none: on 5.10 the GSI QP has no
# port ("link rxa/-"), and the exporter counts it under the netdev of a one-port device.
qps_of_device() { rdma resource show qp | awk -v d="$1/" 'index($2, d) == 1'; }
kernel_qps_of() { # IBDEV MODULE
  qps_of_device "$1" | awk -v m="[$2]" '{ for (i = 1; i < NF; i++) if ($i == "comm" && $(i + 1) == m) n++ } END { print n + 0 }'
}
pod_qps=$(workload_qps_of_pids rxa "$TESTBED_WORK/pod.pids")
job_qps=$(workload_qps_of_pids rxb "$TESTBED_WORK/job.pids")
stray_qps=$(workload_qps_of_pids rxa "$TESTBED_WORK/stray.pids")
kmod=$(qps_of_device rxa | awk '{ for (i = 1; i < NF; i++) if ($i == "comm" && $(i + 1) ~ /^\[/) { m = $(i + 1); gsub(/[][]/, "", m); print m; exit } }')
[ -n "$kmod" ] || fail "no kernel QP on rxa: $(rdma resource show qp)"
kern_qps=$(kernel_qps_of rxa "$kmod")
log "oracle: pod $pod_qps QPs on rxa, job $job_qps on rxb, stray $stray_qps on rxa, [$kmod] $kern_qps on rxa"
pid=$(head -n1 "$TESTBED_WORK/pod.pids")
grep -q "kubepods-besteffort-pod" "/proc/$pid/cgroup" || fail "the pod's QP holder is not in its cgroup: $(cat "/proc/$pid/cgroup")"

# PFC on priority 3 (the storm series exist only for a PFC-enabled priority).
for nd in "$a" "$b"; do dcb pfc set dev "$nd" prio-pfc all:off 3:on || fail "dcb pfc set $nd"; done
start_exporter --collector.device-include="^($a|$b)\$" --attribution.interval=1s

# 1. The owners, with the oracle's counts.
named() {
  scrape
  [ "$(metric_from "$METRICS" roce_workload_qps netdev="$a" rdma_device=rxa kind=pod)" = "$pod_qps" ] &&
    [ "$(metric_from "$METRICS" roce_workload_qps netdev="$b" rdma_device=rxb kind=slurm_job)" = "$job_qps" ]
}
wait_for 15 named || { grep '^roce_workload_qps' "$METRICS" >&2; fail "roce_workload_qps does not name the pod on $a and the job on $b"; }
assert_eq ml/trainer-0 "$(metric_label "$METRICS" roce_workload_qps workload netdev="$a" kind=pod)" "the pod's workload"
assert_eq "$uid" "$(metric_label "$METRICS" roce_workload_qps pod_uid netdev="$a" kind=pod)" "the pod's UID"
assert_eq ml "$(metric_label "$METRICS" roce_workload_qps pod_namespace netdev="$a" kind=pod)" "the pod's namespace"
assert_eq trainer-0 "$(metric_label "$METRICS" roce_workload_qps pod_name netdev="$a" kind=pod)" "the pod's name"
assert_eq 4242 "$(metric_label "$METRICS" roce_workload_qps workload netdev="$b" kind=slurm_job)" "the Slurm job"
assert_eq "$stray_qps" "$(metric_from "$METRICS" roce_workload_qps netdev="$a" rdma_device=rxa kind=unknown)" "unowned QPs on $a"
assert_eq "$kern_qps" "$(metric_from "$METRICS" roce_workload_qps netdev="$a" rdma_device=rxa kind=kernel workload="$kmod")" "[$kmod] QPs on rxa"
assert_eq "" "$(_series_matching "$METRICS" roce_workload_qps netdev="$b" kind=pod)" "pod series on $b"
assert_eq "" "$(_series_matching "$METRICS" roce_workload_qps netdev="$a" kind=slurm_job)" "job series on $a"

# 2. A storm on A: the storm and the pod are on the same netdev, the job's NIC is calm.
simnic_ctl "$a" "storm start 3 rx"
stormed() { [ "$(metric roce_pfc_storm netdev="$a" prio=3 direction=rx)" = 1 ]; }
wait_for 10 stormed || fail "no storm on $a"
scrape
assert_eq 0 "$(metric_from "$METRICS" roce_pfc_storm netdev="$b" prio=3 direction=rx)" "storm on $b"
assert_eq "$pod_qps" "$(metric_from "$METRICS" roce_workload_qps netdev="$a" kind=pod)" "the pod during the storm"
simnic_ctl "$a" "storm stop all"

# 3. The pod's processes exit: its series goes, the job's stays.
workload_stop pod
pod_gone() { scrape && [ -z "$(_series_matching "$METRICS" roce_workload_qps kind=pod)" ]; }
wait_for 10 pod_gone || fail "the pod's series stayed after its processes exited"
assert_eq "$job_qps" "$(metric_from "$METRICS" roce_workload_qps netdev="$b" kind=slurm_job)" "the job after the pod left"

# 4. The poller's counters.
reads=$(metric_from "$METRICS" roce_exporter_attribution_reads_total)
[ "${reads:-0}" -gt 0 ] || fail "roce_exporter_attribution_reads_total is '$reads'"
errors=$(awk '/^roce_exporter_attribution_read_errors_total/ { s += $NF } END { print s + 0 }' "$METRICS")
assert_eq 0 "$errors" "attribution read errors"
workload_stop job
workload_stop stray
assert_no_negative "$METRICS"
exporter_alive
stop_exporter
