# shellcheck shell=sh
# Consumers of rxe0 (docs/attribution.md): an rping server in a cgroup shaped like kubelet's
# (systemd driver, Burstable pod, containerd scope) with its /var/log/pods/<ns>_<name>_<uid>
# directory, an rping client in a Slurm cgroup/v2 job step; with --attribution.interval=1s the
# exporter names the pod (ml/rping-server), the job (4242) and ib_core's GSI QP on veth0, one QP
# each, as `rdma resource show qp` lists them; the job's series goes when its process ends.
require exporter rxe
mkdir -p /sys/fs/cgroup
grep -q " /sys/fs/cgroup cgroup2 " /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup ||
  skip "no cgroup2 in this kernel"
uid=0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b
cid=3b9f2c1d4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c
kubepods=/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice
pod=$kubepods/kubepods-burstable-pod$(echo "$uid" | tr - _).slice/cri-containerd-$cid.scope
job=/sys/fs/cgroup/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0
mkdir -p "$pod" "$job" "/var/log/pods/ml_rping-server_$uid"

# Each process moves itself into its cgroup before exec, so every QP it creates is charged there.
sh -c "echo \$\$ >$pod/cgroup.procs; exec rping -s -a $RXE_ADDR" >"$TESTBED_WORK/srv.log" 2>&1 &
srv=$!
connected() { [ "$(rdma resource show qp | grep -c 'type RC .*comm rping')" -eq 2 ]; }
sh -c "echo \$\$ >$job/cgroup.procs; exec rping -c -a $RXE_ADDR -C 100000000 -S 64" \
  >"$TESTBED_WORK/cli.log" 2>&1 &
cli=$!
wait_for 20 connected || fail "rping did not connect: $(tail -n 3 "$TESTBED_WORK/cli.log")"
# Stopped, both keep their QPs and leave the guest's one CPU (TCG) to the exporter.
kill -STOP "$cli" "$srv"
rdma resource show qp >&2

start_exporter --collector.device-include='^veth0$' --attribution.interval=1s
named() {
  scrape "$TESTBED_WORK/m"
  metric_from "$TESTBED_WORK/m" roce_workload_qps kind=slurm_job >/dev/null &&
    metric_from "$TESTBED_WORK/m" roce_workload_qps kind=pod >/dev/null
}
wait_for 15 named || {
  grep -E '^roce_workload_qps|^roce_exporter_attribution' "$TESTBED_WORK/m" >&2
  fail "the pod and the job were not named within 15 s"
}
grep -E '^roce_workload_qps|^roce_exporter_attribution_reads' "$TESTBED_WORK/m" >&2
m=$TESTBED_WORK/m
assert_num_eq 1 "$(metric_from "$m" roce_workload_qps netdev=veth0 rdma_device=rxe0 kind=pod \
  workload=ml/rping-server pod_namespace=ml pod_name=rping-server pod_uid="$uid")" "the pod's QPs"
assert_num_eq 1 "$(metric_from "$m" roce_workload_qps kind=slurm_job workload=4242)" "the job's QPs"
assert_num_eq 1 "$(metric_from "$m" roce_workload_qps kind=kernel workload=ib_core)" "ib_core's QPs"
assert_eq 3 "$(series_count "$m" '^roce_workload_qps\{')" "roce_workload_qps series"
for reason in malformed permission other unavailable; do
  assert_num_eq 0 "$(metric_from "$m" roce_exporter_attribution_read_errors_total reason=$reason)" \
    "read errors ($reason)"
done

kill "$cli" "$srv" 2>/dev/null
kill -CONT "$cli" "$srv" 2>/dev/null
job_gone() {
  scrape "$TESTBED_WORK/m"
  ! metric_from "$TESTBED_WORK/m" roce_workload_qps kind=slurm_job >/dev/null 2>&1
}
wait_for 10 job_gone || fail "the job's series stayed after its process ended"
stop_exporter
rmdir "$pod" "$job" 2>/dev/null || true
